package clusternetwork_test

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/clusternetwork"
	"github.com/metalwire/metalwire/internal/controller/networkdevice"
	"github.com/metalwire/metalwire/internal/devenv/standin"
)

// A burst of hosts joining at once is written together: each NIC's status once, the
// ClusterNetwork's status and each switch's batch at most once per quiet period (the first at
// once), not once per host. Nothing a host needs is lost on the way: every one ends ready with
// its ports configured.
func TestABurstOfHostsIsWrittenTogether(t *testing.T) {
	const hosts = 40
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	drv := standin.New("openvswitch")
	s1, s2 := drv.Switch(ns+"-switch1"), drv.Switch(ns+"-switch2")
	objs := []client.Object{networkDevice(ns, "switch1", "switch2"), clusterNetwork(ns, "cn1", "1000-1999", "control", "data")}
	for i := range hosts {
		h := fmt.Sprintf("bm%02d", i)
		s1.AddPorts(1, "p-"+h)
		s2.AddPorts(1, "p-"+h)
		objs = append(objs, hostNIC(ns, h))
	}
	startFabric(t, ns, drv)
	create(t, objs...)
	g.Eventually(func(g Gomega) {
		g.Expect(getCN(g, ns, "cn1").Status.Available).To(HaveLen(hosts))
	}, timeout).Should(Succeed())

	counting := time.Now()
	cnWrites := env.CountModified(t, ns, &netv1.ClusterNetworkList{})
	nicWrites := env.CountModified(t, ns, &netv1.NICList{})
	applied1, _ := s1.Counts()
	applied2, _ := s2.Counts()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			selectHost(t, ns, fmt.Sprintf("bm%02d", i), "cn1")
		}()
	}
	wg.Wait()
	g.Eventually(func(g Gomega) {
		cn := getCN(g, ns, "cn1")
		g.Expect(cn.Status.Selected).To(HaveLen(hosts))
		for i := range hosts {
			g.Expect(cn.Status.States).To(HaveKeyWithValue(fmt.Sprintf("bm%02d", i), HaveField("State", netv1.HostReady)))
		}
	}, timeout).Should(Succeed())
	elapsed := time.Since(start)
	for i := range hosts {
		p, _ := s1.Port(fmt.Sprintf("p-bm%02d", i))
		g.Expect(p.VLAN).To(Equal(1000), "host bm%02d's first port", i)
	}
	time.Sleep(3 * clusternetwork.DefaultProgressQuiet / 2) // the last held write, if any, lands
	window := time.Since(counting)

	// Writes that may wait are at least a quiet period apart, the first at once: in the window
	// counted, at most one per started period and one more (and one for the latency between
	// deciding a write and its landing).
	periods := func(quiet time.Duration) int { return int(math.Ceil(window.Seconds()/quiet.Seconds())) + 1 }
	g.Expect(cnWrites()["cn1"]).To(BeNumerically("<=", periods(clusternetwork.DefaultProgressQuiet)),
		"%d hosts joined in %s (%s counted): the ClusterNetwork's status is written at most once per %s", hosts, elapsed, window, clusternetwork.DefaultProgressQuiet)
	for name, n := range nicWrites() {
		g.Expect(n).To(Equal(2), "NIC %s: the selection and its status, each written once", name)
	}
	passes := periods(networkdevice.DefaultPassQuiet)
	a1, _ := s1.Counts()
	a2, _ := s2.Counts()
	g.Expect(a1-applied1).To(BeNumerically("<=", passes), "switch1: the burst's ports applied together, at most one batch per %s", networkdevice.DefaultPassQuiet)
	g.Expect(a2-applied2).To(BeNumerically("<=", passes), "switch2: at most one batch per %s", networkdevice.DefaultPassQuiet)
	t.Logf("%d hosts ready in %s: %d ClusterNetwork status writes, %d and %d batches per switch", hosts, elapsed, cnWrites()["cn1"], a1-applied1, a2-applied2)
}
