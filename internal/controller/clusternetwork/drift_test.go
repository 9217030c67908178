package clusternetwork_test

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/manager"
	"github.com/metalwire/metalwire/internal/metrics"
	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
)

// A port changed by hand at a real Open vSwitch is found by the periodic read-back: reported
// (condition Drifted, an event, the drift metric) and put back, or under driftPolicy report only
// reported and left as found. A NetworkDevice in dry run lists the batch each switch would get
// and sends nothing until the annotation goes.
func TestDriftAndDryRunOnARealOpenvSwitch(t *testing.T) {
	ovstest.Require(t, "ovs-vswitchd")
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	sw, br := leafSwitch(t, "p-h1", "p-h2")
	host, port, err := net.SplitHostPort(sw.TCPAddr)
	g.Expect(err).NotTo(HaveOccurred())
	p, _ := strconv.Atoi(port)

	startFabricWith(t, ns, nil, func(o *manager.Options) { o.SyncPeriod = 2 * time.Second })
	nd := &netv1.NetworkDevice{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd1"},
		Spec: netv1.NetworkDeviceSpec{Switches: []netv1.Switch{{
			Name: "leaf1", Address: host, Port: int32(p), NetworkOS: netv1.NetworkOSOpenvSwitch, Bridge: br,
		}}},
	}
	create(t, nd)
	for _, h := range []string{"h1", "h2"} {
		create(t, &netv1.NIC{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nic-" + h},
			Spec: netv1.NICSpec{Node: h, NetworkDeviceRef: "nd1", NICs: []netv1.HostNIC{{
				NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: "leaf1", Port: intstr.FromString("p-" + h)}},
				Capability:    netv1.NICCapability{Speed: 1000},
			}}},
		})
	}
	create(t, clusterNetwork(ns, "cn-a", "1001-1001", "control"))
	g.Eventually(func(g Gomega) {
		g.Expect(getCN(g, ns, "cn-a").Status.Available).To(HaveKey("h2"))
	}, timeout).Should(Succeed())
	selectHost(t, ns, "h1", "cn-a")
	g.Eventually(func() int { return sw.Ports(t)["p-h1"].Tag }, timeout).Should(Equal(1001))

	device := func(g Gomega) *netv1.NetworkDevice {
		cur := &netv1.NetworkDevice{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(nd), cur)).To(Succeed())
		return cur
	}
	cond := func(g Gomega, typ string) metav1.Condition {
		for _, c := range device(g).Status.Conditions {
			if c.Type == typ {
				return c
			}
		}
		return metav1.Condition{}
	}
	g.Eventually(func(g Gomega) { g.Expect(cond(g, netv1.ConditionDrifted).Reason).To(Equal(netv1.ReasonNoDrift)) }, timeout).Should(Succeed())
	drifts := func() float64 {
		m := &dto.Metric{}
		g.Expect(metrics.FabricDrift.WithLabelValues(ns, "nd1", "leaf1").Write(m)).To(Succeed())
		return m.GetCounter().GetValue()
	}
	g.Expect(drifts()).To(BeZero())

	// Someone moves h1's port at the switch's console: reported and put back.
	sw.Vsctl(t, "set", "port", "p-h1", "tag=7")
	g.Eventually(func(g Gomega) {
		c := cond(g, netv1.ConditionDrifted)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Reason).To(Equal(netv1.ReasonDriftRepaired))
		g.Expect(c.Message).To(ContainSubstring("switch leaf1 port p-h1: set access vlan 1001, found access vlan 7 (seen "))
		g.Expect(c.Message).To(ContainSubstring("put back as set"))
	}, timeout).Should(Succeed())
	g.Eventually(func() int { return sw.Ports(t)["p-h1"].Tag }, timeout).Should(Equal(1001), "the drifted port is put back")
	g.Expect(drifts()).To(BeNumerically(">=", 1))
	g.Eventually(func(g Gomega) {
		evs := &eventsv1.EventList{}
		g.Expect(env.Client.List(ctx, evs, client.InNamespace(ns))).To(Succeed())
		g.Expect(evs.Items).To(ContainElement(And(HaveField("Reason", netv1.ConditionDrifted), HaveField("Regarding.Name", "nd1"),
			HaveField("Note", ContainSubstring("port p-h1: set access vlan 1001, found access vlan 7")))))
	}, timeout).Should(Succeed())

	// driftPolicy report: the next change at the console is reported and left as found.
	cur := device(g)
	base := cur.DeepCopy()
	cur.Spec.DriftPolicy = netv1.DriftReport
	g.Expect(env.Client.Patch(ctx, cur, client.MergeFrom(base))).To(Succeed())
	sw.Vsctl(t, "set", "port", "p-h1", "tag=8")
	g.Eventually(func(g Gomega) {
		c := cond(g, netv1.ConditionDrifted)
		g.Expect(c.Reason).To(Equal(netv1.ReasonDriftReported))
		g.Expect(c.Message).To(ContainSubstring("port p-h1: set access vlan 1001, found access vlan 8"))
		g.Expect(c.Message).To(ContainSubstring("left as found (driftPolicy report)"))
	}, timeout).Should(Succeed())
	g.Consistently(func() int { return sw.Ports(t)["p-h1"].Tag }, 5*time.Second, 500*time.Millisecond).Should(Equal(8),
		"under driftPolicy report the port stays as found, through several resyncs")

	// Dry run: h2 joins, the batch is planned and nothing is sent.
	cur = device(g)
	base = cur.DeepCopy()
	cur.Annotations = map[string]string{netv1.DryRunAnnotation: "true"}
	g.Expect(env.Client.Patch(ctx, cur, client.MergeFrom(base))).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(cond(g, netv1.ConditionDryRun).Status).To(Equal(metav1.ConditionTrue)) }, timeout).Should(Succeed())
	versions := sw.PortVersions(t)
	selectHost(t, ns, "h2", "cn-a")
	g.Eventually(func(g Gomega) {
		st := device(g).Status.Switches
		g.Expect(st).To(HaveLen(1))
		// Open vSwitch has VLANs only as port tags: with h1's port moved to 8 by hand, 1001 is
		// planned too. h1's drifted port is left alone (driftPolicy report).
		g.Expect(st[0].PlannedChanges).To(Equal([]string{"ensure-vlan 1001", "access-port p-h2 vlan 1001"}), "the batch leaf1 would get")
		g.Expect(cond(g, netv1.ConditionDryRun).Message).To(ContainSubstring("2 change(s) planned on 1 switch(es), nothing sent"))
	}, timeout).Should(Succeed())
	g.Consistently(func() map[string]string { return sw.PortVersions(t) }, 4*time.Second, 500*time.Millisecond).Should(Equal(versions),
		"dry run sends nothing to the switch")
	g.Expect(state(g, ns, "cn-a", "h2").State).To(Equal(netv1.HostConfiguring), "a host whose ports were only planned is not ready")

	// The annotation goes: the planned batch is sent.
	cur = device(g)
	base = cur.DeepCopy()
	delete(cur.Annotations, netv1.DryRunAnnotation)
	g.Expect(env.Client.Patch(ctx, cur, client.MergeFrom(base))).To(Succeed())
	g.Eventually(func() int { return sw.Ports(t)["p-h2"].Tag }, timeout).Should(Equal(1001))
	g.Eventually(func(g Gomega) {
		g.Expect(state(g, ns, "cn-a", "h2").State).To(Equal(netv1.HostReady))
		g.Expect(cond(g, netv1.ConditionDryRun).Status).To(Equal(metav1.ConditionFalse))
		g.Expect(device(g).Status.Switches[0].PlannedChanges).To(BeEmpty())
	}, timeout).Should(Succeed())
}
