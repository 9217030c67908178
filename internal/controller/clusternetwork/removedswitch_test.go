package clusternetwork_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/devenv/standin"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// A switch removed from a NetworkDevice's spec still has ports the controller configured: they
// are reset and its VLANs removed before its record goes. While the switch cannot be reached
// the record stays (removed: true) and Reachable says why; ports it never configured stay.
func TestRemovedSwitchIsResetBeforeItsRecordGoes(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	drv := standin.New("openvswitch")
	s1, s2 := drv.Switch(ns+"-switch1"), drv.Switch(ns+"-switch2")
	s1.AddPorts(1, "p-bm0")
	s2.AddPorts(1, "p-bm0")
	s2.AddPorts(7, "uplink")
	startFabric(t, ns, drv)
	create(t, networkDevice(ns, "switch1", "switch2"), hostNIC(ns, "bm0"), clusterNetwork(ns, "cn1", "1000-1999", "control", "data"))
	g.Eventually(func(g Gomega) {
		g.Expect(getCN(g, ns, "cn1").Status.Available).To(HaveKey("bm0"))
	}, timeout).Should(Succeed())
	selectHost(t, ns, "bm0", "cn1")
	g.Eventually(func(g Gomega) {
		g.Expect(state(g, ns, "cn1", "bm0").State).To(Equal(netv1.HostReady))
	}, timeout).Should(Succeed())
	p, _ := s2.Port("p-bm0")
	g.Expect(p).To(Equal(fabric.Port{Name: "p-bm0", Mode: fabric.ModeAccess, VLAN: 1001}))

	// switch2 is down when it is taken out of the NetworkDevice: its record stays, marked removed.
	s2.SetDown(true)
	nd := &netv1.NetworkDevice{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nd1"}, nd)).To(Succeed())
	base := nd.DeepCopy()
	nd.Spec.Switches = nd.Spec.Switches[:1]
	g.Expect(env.Client.Patch(ctx, nd, client.MergeFrom(base))).To(Succeed())
	g.Eventually(func(g Gomega) {
		nd := &netv1.NetworkDevice{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nd1"}, nd)).To(Succeed())
		g.Expect(nd.Status.Switches).To(HaveLen(2))
		sw := nd.Status.Switches[1]
		g.Expect(sw.Name).To(Equal("switch2"))
		g.Expect(sw.Removed).To(BeTrue())
		g.Expect(sw.Reachable).To(BeFalse())
		g.Expect(sw.Ports).To(ContainElement(HaveField("Name", "p-bm0")), "what was configured there is still recorded")
		g.Expect(condition(nd.Status.Conditions, netv1.ConditionReachable)).To(ContainSubstring("switch switch2: "))
		// The host's card is cabled to a switch the NetworkDevice no longer has.
		g.Expect(state(g, ns, "cn1", "bm0").State).To(Equal(netv1.HostError))
	}, timeout).Should(Succeed())
	p, _ = s2.Port("p-bm0")
	g.Expect(p.VLAN).To(Equal(1001), "nothing reached the switch while it was down")

	// Back up: the port goes idle, the VLAN goes, then the record.
	s2.SetDown(false)
	g.Eventually(func(g Gomega) {
		p, _ := s2.Port("p-bm0")
		g.Expect(p).To(Equal(fabric.Port{Name: "p-bm0", Mode: fabric.ModeAccess, VLAN: 1}))
		g.Expect(s2.VLANs()).To(BeEmpty())
		nd := &netv1.NetworkDevice{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nd1"}, nd)).To(Succeed())
		g.Expect(nd.Status.Switches).To(HaveLen(1))
		g.Expect(nd.Status.Switches[0].Name).To(Equal("switch1"))
		g.Expect(condition(nd.Status.Conditions, netv1.ConditionReachable)).To(HavePrefix("True"))
	}, timeout).Should(Succeed())
	uplink, _ := s2.Port("uplink")
	g.Expect(uplink.VLAN).To(Equal(7), "a port the controller never configured is untouched")
	p, _ = s1.Port("p-bm0")
	g.Expect(p.VLAN).To(Equal(1000), "the switch still in the NetworkDevice keeps the host's port")
}
