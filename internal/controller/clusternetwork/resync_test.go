package clusternetwork_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/devenv/standin"
	"github.com/metalwire/metalwire/internal/manager"
	"github.com/metalwire/metalwire/internal/switchdriver"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// A port someone changed at the switch's console is put right by the next resync
// (--sync-period), with nothing changed in Kubernetes.
func TestAPortChangedByHandIsPutRightByTheResync(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	drv := standin.New("openvswitch")
	s1, s2 := drv.Switch(ns+"-switch1"), drv.Switch(ns+"-switch2")
	s1.AddPorts(1, "p-bm0")
	s2.AddPorts(1, "p-bm0")
	reg := &switchdriver.Registry{}
	reg.Register(drv)
	startFabricWith(t, ns, reg, func(o *manager.Options) { o.SyncPeriod = 2 * time.Second })
	create(t, networkDevice(ns, "switch1", "switch2"), hostNIC(ns, "bm0"), clusterNetwork(ns, "cn1", "1000-1999", "control", "data"))
	g.Eventually(func(g Gomega) {
		g.Expect(getCN(g, ns, "cn1").Status.Available).To(HaveKey("bm0"))
	}, timeout).Should(Succeed())
	selectHost(t, ns, "bm0", "cn1")
	g.Eventually(func(g Gomega) {
		g.Expect(state(g, ns, "cn1", "bm0").State).To(Equal(netv1.HostReady))
	}, timeout).Should(Succeed())

	s1.SetPort(fabric.Port{Name: "p-bm0", Mode: fabric.ModeAccess, VLAN: 1})
	g.Eventually(func() fabric.Port { p, _ := s1.Port("p-bm0"); return p }, 30*time.Second, 200*time.Millisecond).
		Should(Equal(fabric.Port{Name: "p-bm0", Mode: fabric.ModeAccess, VLAN: 1000}), "the resync reads the switch back and applies the difference")
}
