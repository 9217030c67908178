package clusternetwork_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/switchtest/vendortest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// vendorBondFabric is a vendor switch emulated over SSH with ports (three or more) and one host,
// h1, whose two cards are cabled to the first two, and a ClusterNetwork whose network bonds them
// with LACP.
func vendorBondFabric(t *testing.T, os netv1.NetworkOS, ports []string, aggregates *netv1.AggregateRange) (string, *vendortest.Server) {
	t.Helper()
	ns := env.NewNamespace(t)
	srv := vendortest.Start(t, string(os), ports...)
	startFabricWith(t, ns, nil)
	cn := clusterNetwork(ns, "cn-a", "1001-1001", "control")
	cn.Spec.Networks[0].LinkAggregation = 2
	cn.Spec.Networks[0].LAG = &netv1.LAG{Mode: netv1.LAGLACP}
	create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "leaf1-login"},
		Type:       corev1.SecretTypeBasicAuth,
		StringData: map[string]string{corev1.BasicAuthUsernameKey: srv.User, corev1.BasicAuthPasswordKey: srv.Password},
	}, &netv1.NetworkDevice{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd1"},
		Spec: netv1.NetworkDeviceSpec{Switches: []netv1.Switch{{
			Name: "leaf1", Address: srv.Host, Port: int32(srv.Port), NetworkOS: os,
			HostKey: srv.HostKey, CredentialsRef: &netv1.SecretReference{Name: "leaf1-login"},
			Aggregates: aggregates,
		}}},
	}, &netv1.NIC{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nic-h1"},
		Spec:       netv1.NICSpec{Node: "h1", NetworkDeviceRef: "nd1", NICs: []netv1.HostNIC{vendorCard(ports[0]), vendorCard(ports[1])}},
	}, cn)
	return ns, srv
}

// vendorCard is a 1000 Mb/s card cabled to port of switch leaf1.
func vendorCard(port string) netv1.HostNIC {
	return netv1.HostNIC{NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: "leaf1", Port: intstr.FromString(port)}},
		Capability: netv1.NICCapability{Speed: 1000}}
}

// The image's manager bonds a host's two cards on each vendor OS whose driver makes bonds: the
// host is ready, both ports are members of one bond on the switch, the NIC status names it, and
// leaving puts both ports back as idle access ports.
func TestControllersBondHostsOnVendorSwitches(t *testing.T) {
	for _, vs := range vendorSwitches {
		t.Run(string(vs.os), func(t *testing.T) {
			g := NewWithT(t)
			var agg *netv1.AggregateRange
			if vs.os == netv1.NetworkOSSONiC {
				agg = &netv1.AggregateRange{First: 1000, Last: 9999} // SONiC's bonds are numbered from it
			}
			ns, srv := vendorBondFabric(t, vs.os, vs.ports[:], agg)
			g.Eventually(func(g Gomega) {
				g.Expect(getCN(g, ns, "cn-a").Status.Available).To(HaveKey("h1"))
			}, timeout).Should(Succeed())
			selectHost(t, ns, "h1", "cn-a")
			g.Eventually(func(g Gomega) {
				st := state(g, ns, "cn-a", "h1")
				g.Expect(st.State).To(Equal(netv1.HostReady), "host h1: %s", st.Message)
			}, timeout).Should(Succeed())

			member := func(port string) string {
				p, _ := srv.Config.Port(port)
				switch {
				case p.Bond != "":
					return "bond " + p.Bond
				case p.Channel != 0:
					return fmt.Sprint("channel ", p.Channel)
				}
				return ""
			}
			a, b := member(vs.ports[0]), member(vs.ports[1])
			g.Expect(a).NotTo(BeEmpty(), "port %s is in no bond", vs.ports[0])
			g.Expect(b).To(Equal(a), "the host's two ports are not in one bond")
			g.Expect(member(vs.ports[2])).To(BeEmpty(), "a port of no host was bonded")
			nic := &netv1.NIC{}
			g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "nic-h1"}, nic)).To(Succeed())
			g.Expect(nic.Status.NICs).To(HaveLen(2))
			for _, c := range nic.Status.NICs {
				g.Expect(c).NotTo(BeNil())
				g.Expect(c.LAG).NotTo(BeNil(), "NIC status names no bond")
				g.Expect(c.LAG.Mode).To(Equal(netv1.LAGLACP))
			}

			selectHost(t, ns, "h1", "")
			g.Eventually(func(g Gomega) {
				for _, p := range vs.ports[:2] {
					cfg, _ := srv.Config.Port(p)
					g.Expect(member(p)).To(BeEmpty(), "port %s is still in a bond", p)
					g.Expect(cfg.Mode).To(Equal("access"))
					g.Expect(cfg.Access).To(Equal(1))
				}
			}, timeout).Should(Succeed())
		})
	}
}

// A bonded network whose host is cabled to a SONiC switch that declares no aggregates (the
// port-channel numbers its bonds are named from) is refused before anything is sent: the
// condition names the host, the switch and the field to set, and the host is not offered.
func TestABondOnASONiCSwitchWithoutAggregatesIsRefused(t *testing.T) {
	g := NewWithT(t)
	ns, srv := vendorBondFabric(t, netv1.NetworkOSSONiC, []string{"Ethernet0", "Ethernet4", "Ethernet8"}, nil)
	g.Eventually(func(g Gomega) {
		cn := getCN(g, ns, "cn-a")
		c := meta.FindStatusCondition(cn.Status.Conditions, netv1.ConditionLinkAggregationValid)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Message).To(ContainSubstring("host h1: network control bonds cards on switch leaf1: networkOS sonic numbers its aggregates"))
		g.Expect(c.Message).To(ContainSubstring("set spec.switches[leaf1].aggregates"))
		g.Expect(cn.Status.Available).NotTo(HaveKey("h1"))
	}, timeout).Should(Succeed())
	for _, cmd := range srv.Commands() {
		g.Expect(cmd).NotTo(ContainSubstring("portchannel"), "a bond line was sent")
	}
}

// Two hosts' bonds whose names land on one port-channel number of a SONiC switch's range (here a
// range of one number, 7) cannot both be made: with h1 bonded, h2 is not offered, and selected
// anyway it is refused before a line is sent for its ports, the condition and its state naming
// both hosts, the switch and the remedy, while h1 stays ready. Once h1 leaves and the switch has
// removed PortChannel7, h2 is bonded on it.
func TestBondsLandingOnOneAggregateNumberAreRefused(t *testing.T) {
	g := NewWithT(t)
	ports := []string{"Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12"}
	ns, srv := vendorBondFabric(t, netv1.NetworkOSSONiC, ports, &netv1.AggregateRange{First: 7, Last: 7})
	create(t, &netv1.NIC{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nic-h2"},
		Spec:       netv1.NICSpec{Node: "h2", NetworkDeviceRef: "nd1", NICs: []netv1.HostNIC{vendorCard(ports[2]), vendorCard(ports[3])}},
	})
	g.Eventually(func(g Gomega) {
		g.Expect(getCN(g, ns, "cn-a").Status.Available).To(And(HaveKey("h1"), HaveKey("h2")))
	}, timeout).Should(Succeed())
	selectHost(t, ns, "h1", "cn-a")
	g.Eventually(func(g Gomega) {
		st := state(g, ns, "cn-a", "h1")
		g.Expect(st.State).To(Equal(netv1.HostReady), "host h1: %s", st.Message)
		g.Expect(getCN(g, ns, "cn-a").Status.Available).NotTo(HaveKey("h2"))
	}, timeout).Should(Succeed())
	channel := func(port string) int {
		p, _ := srv.Config.Port(port)
		return p.Channel
	}
	g.Expect([]int{channel(ports[0]), channel(ports[1])}).To(Equal([]int{7, 7}), "h1's ports are not in PortChannel7")

	selectHost(t, ns, "h2", "cn-a")
	want := "host h2: network control's bond (" + fabric.LAGName("h2", "control") + ") on switch leaf1 would be aggregate PortChannel7, " +
		"which host h1's bond for network control (" + fabric.LAGName("h1", "control") + ") has: the two bonds' names land on one number of " +
		"spec.switches[leaf1].aggregates 7-7; give the switch a wider range"
	g.Eventually(func(g Gomega) {
		cn := getCN(g, ns, "cn-a")
		g.Expect(cn.Status.States["h2"].State).To(Equal(netv1.HostError))
		g.Expect(cn.Status.States["h2"].Message).To(ContainSubstring(want))
		g.Expect(condition(cn.Status.Conditions, netv1.ConditionLinkAggregationValid)).To(ContainSubstring("False LAGRefused: " + want))
	}, timeout).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(state(g, ns, "cn-a", "h1").State).To(Equal(netv1.HostReady))
	}, 2*time.Second).Should(Succeed())
	for _, cmd := range srv.Commands() {
		g.Expect(cmd).NotTo(Or(ContainSubstring(ports[2]), ContainSubstring(ports[3])), "a line was sent for h2's ports")
	}
	nic := &netv1.NIC{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "nic-h2"}, nic)).To(Succeed())
	g.Expect(nic.Status.ClusterNetwork).To(BeEmpty(), "the refused host's NIC status was written")

	selectHost(t, ns, "h1", "")
	g.Eventually(func(g Gomega) {
		st := state(g, ns, "cn-a", "h2")
		g.Expect(st.State).To(Equal(netv1.HostReady), "host h2: %s", st.Message)
		g.Expect([]int{channel(ports[0]), channel(ports[1]), channel(ports[2]), channel(ports[3])}).To(Equal([]int{0, 0, 7, 7}))
	}, timeout).Should(Succeed())
}
