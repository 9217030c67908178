package clusternetwork_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
	"github.com/metalwire/metalwire/pkg/fabric"
	"github.com/metalwire/metalwire/pkg/render"
)

// bondedNIC is the NIC object of a host whose two cards (by MAC) are cabled to switch ports.
func bondedNIC(ns, host string, sw []string, ports, macs []string) *netv1.NIC {
	nic := &netv1.NIC{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nic-" + host}, Spec: netv1.NICSpec{Node: host, NetworkDeviceRef: "nd1"}}
	for i := range ports {
		nic.Spec.NICs = append(nic.Spec.NICs, netv1.HostNIC{
			Name: "eno" + string(rune('1'+i)), MAC: macs[i],
			NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: sw[i], Port: intstr.FromString(ports[i])}},
			Capability:    netv1.NICCapability{Speed: 1000},
		})
	}
	return nic
}

func bondedNetwork(ns string) *netv1.ClusterNetwork {
	cn := clusterNetwork(ns, "cn-a", "1001-1001", "control")
	cn.Spec.Networks[0].LinkAggregation = 2
	cn.Spec.Networks[0].LAG = &netv1.LAG{Mode: netv1.LAGLACP, LACPRate: netv1.LACPFast}
	return cn
}

// The image's manager bonds each selected host's two cards on a real Open vSwitch: LACP
// negotiates with the host's own bond, the hosts reach each other through their bonds, also with
// a member link down; nothing is sent when nothing changed; a host leaving gets its two idle
// access ports back, and deleting the ClusterNetwork leaves the switch as it was.
func TestControllersBondHostsOnARealOpenvSwitch(t *testing.T) {
	for _, tc := range realLeaves {
		t.Run(tc.name, func(t *testing.T) {
			ovstest.Require(t, "ovs-vswitchd", "ovs-appctl", "ip", "ping")
			g := NewWithT(t)
			ctx := context.Background()
			ns := env.NewNamespace(t)
			f := ovstest.NewLAGFabric(t, true)
			before := f.Switch.Ports(t)
			startFabricWith(t, ns, nil)

			leaf, secret := tc.leaf(t, f.Switch, f.Bridge, ns)
			create(t, &netv1.NetworkDevice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd1"}, Spec: netv1.NetworkDeviceSpec{Switches: []netv1.Switch{leaf}}})
			if secret != nil {
				create(t, secret)
			}
			hosts := []*ovstest.BondedHost{f.B1, f.B2}
			for _, h := range hosts {
				create(t, bondedNIC(ns, h.Name, []string{"leaf1", "leaf1"}, h.Ports, h.MACs))
			}
			create(t, bondedNetwork(ns))
			g.Eventually(func(g Gomega) {
				g.Expect(getCN(g, ns, "cn-a").Status.Available).To(HaveKey("b1"))
				g.Expect(getCN(g, ns, "cn-a").Status.Available).To(HaveKey("b2"))
			}, timeout).Should(Succeed())
			for _, h := range hosts {
				selectHost(t, ns, h.Name, "cn-a")
			}
			for _, h := range hosts {
				g.Eventually(func(g Gomega) {
					g.Expect(state(g, ns, "cn-a", h.Name).State).To(Equal(netv1.HostReady), "host %s", h.Name)
				}, timeout).Should(Succeed())
			}
			cn := getCN(g, ns, "cn-a")
			g.Expect(condition(cn.Status.Conditions, netv1.ConditionLinkAggregationValid)).To(HavePrefix("True"))

			// The NIC status names each card's bond; the switch has the bond, LACP negotiated.
			for _, h := range hosts {
				name := fabric.LAGName(h.Name, "control")
				nic := &netv1.NIC{}
				g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nic-" + h.Name}, nic)).To(Succeed())
				for i, a := range nic.Status.NICs {
					g.Expect(a).NotTo(BeNil(), "card %d of %s", i, h.Name)
					g.Expect(a.LAG).To(Equal(&netv1.CardLAG{Name: name, Mode: netv1.LAGLACP, LACPRate: netv1.LACPFast}), "card %d of %s", i, h.Name)
				}
				// The host's network data, rendered from the same NIC status, bonds the same two
				// cards (the veths that negotiate LACP with the switch) by MAC, 802.3ad.
				bond, err := render.FabricBondOf(nic, "cn-a", "control")
				g.Expect(err).NotTo(HaveOccurred())
				nd, err := render.Networking(&infrav1.NetworkData{Links: &infrav1.NetworkDataLinks{
					Bonds: []infrav1.NetworkDataLinkBond{{ID: "bond0", BondFrom: &infrav1.BondSource{ClusterNetwork: "cn-a", Network: "control"}}},
				}}, &render.Facts{Bonds: map[render.VLANRef]render.FabricBond{{ClusterNetwork: "cn-a", Network: "control"}: bond}})
				g.Expect(err).NotTo(HaveOccurred())
				var macs []string
				for _, l := range nd.Links {
					if l.ID == "bond0" {
						g.Expect(l.BondMode).To(Equal("802.3ad"))
						g.Expect(l.BondLinks).To(HaveLen(2))
					} else {
						macs = append(macs, l.MAC)
					}
				}
				g.Expect(macs).To(Equal(h.MACs), "the host's bond names the cards the switch bonded")
				want := []string{"status: active negotiated"}
				for _, p := range h.Ports {
					want = append(want, "member: "+p+": current attached")
				}
				f.Switch.WaitAppctl(t, 30*time.Second, want, "lacp/show", name)
			}
			nd := &netv1.NetworkDevice{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nd1"}, nd)).To(Succeed())
			g.Expect(nd.Status.Switches).To(HaveLen(1))
			g.Expect(nd.Status.Switches[0].Ports).To(ContainElement(And(
				HaveField("Name", fabric.LAGName("b1", "control")), HaveField("VLAN", int32(1001)),
				HaveField("LAG", And(HaveField("Members", f.B1.Ports), HaveField("LAGMode()", netv1.LAGLACP), HaveField("Rate()", netv1.LACPFast))))))
			g.Expect(ovstest.Reaches(t, f.B1.Host, f.B2.Addr, 8)).To(BeTrue(), "b1 reaches b2 through the bonds")
			f.B1.SetCardDown(t, f.Switch, 0, true)
			f.Switch.WaitAppctl(t, 30*time.Second, []string{"member " + f.B1.Ports[0] + ": disabled"}, "bond/show", fabric.LAGName("b1", "control"))
			g.Expect(ovstest.Reaches(t, f.B1.Host, f.B2.Addr, 8)).To(BeTrue(), "b1 reaches b2 with one member link down")
			f.B1.SetCardDown(t, f.Switch, 0, false)

			// Nothing changed: another reconcile sends nothing to the switch.
			versions := f.Switch.PortVersions(t)
			poke(t, ns)
			time.Sleep(3 * time.Second)
			g.Expect(f.Switch.PortVersions(t)).To(Equal(versions), "a reconcile with nothing changed wrote to the switch")

			// b1 leaves: its bond goes, its two ports are idle access ports again.
			selectHost(t, ns, "b1", "")
			g.Eventually(func(g Gomega) {
				ports := f.Switch.Ports(t)
				g.Expect(ports).NotTo(HaveKey(fabric.LAGName("b1", "control")))
				for _, p := range f.B1.Ports {
					g.Expect(ports[p]).To(And(HaveField("Tag", ovstest.IdleVLAN), HaveField("Trunks", BeEmpty()), HaveField("VLANMode", "")), "port %s", p)
				}
			}, timeout).Should(Succeed())
			// ovs-vswitchd applies the database's change a moment after the rows show it.
			g.Eventually(func() bool { return ovstest.Reaches(t, f.B1.Host, f.B2.Addr, 1) }, timeout).Should(BeFalse(), "b1 reaches b2 after leaving")

			g.Expect(env.Client.Delete(ctx, &netv1.ClusterNetwork{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cn-a"}})).To(Succeed())
			g.Eventually(func() bool {
				return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cn-a"}, &netv1.ClusterNetwork{}))
			}, timeout).Should(BeTrue())
			g.Eventually(func() map[string]ovstest.PortRow { return f.Switch.Ports(t) }, timeout).Should(Equal(before))
		})
	}
}

// A host whose bonded cards sit on two Open vSwitch switches is refused: not offered, in error
// when selected, named with both switches and the reason in LinkAggregationValid, and nothing
// is configured on either switch; declaring the two a pair does not help, Open vSwitch has no
// multi-chassis LAG.
func TestBondAcrossTwoOpenvSwitchesIsRefused(t *testing.T) {
	ovstest.Require(t, "ovs-vswitchd")
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	sw1, br1 := leafSwitch(t, "p1")
	sw2, br2 := leafSwitch(t, "p1")
	startFabricWith(t, ns, nil)
	leaf := func(name string, sw *ovstest.Switch, br string) netv1.Switch {
		s, _ := realLeaves[0].leaf(t, sw, br, ns)
		s.Name = name
		return s
	}
	nd := &netv1.NetworkDevice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd1"}, Spec: netv1.NetworkDeviceSpec{
		Switches: []netv1.Switch{leaf("leaf1", sw1, br1), leaf("leaf2", sw2, br2)}}}
	create(t, nd)
	create(t, bondedNIC(ns, "bm0", []string{"leaf1", "leaf2"}, []string{"p1", "p1"}, []string{"02:00:00:00:00:01", "02:00:00:00:00:02"}))
	create(t, bondedNetwork(ns))
	versions1, versions2 := sw1.PortVersions(t), sw2.PortVersions(t)

	g.Eventually(func(g Gomega) {
		cn := getCN(g, ns, "cn-a")
		g.Expect(condition(cn.Status.Conditions, netv1.ConditionLinkAggregationValid)).To(Equal(
			"False LAGRefused: host bm0: network control bonds cards on switches leaf1 and leaf2, which are not an MLAG pair: declare them in the NetworkDevice's spec.mlagPairs (switch OSes with multi-chassis LAG: eos, nxos, cumulus, sonic) or cable the bonded cards to one switch"))
		g.Expect(cn.Status.Available).NotTo(HaveKey("bm0"))
	}, timeout).Should(Succeed())

	selectHost(t, ns, "bm0", "cn-a")
	g.Eventually(func(g Gomega) {
		st := state(g, ns, "cn-a", "bm0")
		g.Expect(st.State).To(Equal(netv1.HostError))
		g.Expect(st.Message).To(ContainSubstring("switches leaf1 and leaf2, which are not an MLAG pair"))
		g.Expect(condition(getCN(g, ns, "cn-a").Status.Conditions, netv1.ConditionReady)).To(ContainSubstring("bm0: host bm0: network control bonds cards on switches leaf1 and leaf2"))
	}, timeout).Should(Succeed())

	// Declared a pair: still refused, for the switches' OS.
	base := nd.DeepCopy()
	nd.Spec.MLAGPairs = []netv1.MLAGPair{{Name: "pair1", Switches: []string{"leaf1", "leaf2"}, Domain: 7}}
	g.Expect(env.Client.Patch(ctx, nd, client.MergeFrom(base))).To(Succeed())
	g.Eventually(func(g Gomega) {
		msg := condition(getCN(g, ns, "cn-a").Status.Conditions, netv1.ConditionLinkAggregationValid)
		g.Expect(msg).To(HavePrefix("False LAGRefused: host bm0: network control bonds cards on switches leaf1 and leaf2 (MLAG pair pair1), but switch leaf1 runs networkOS openvswitch, which has no multi-chassis LAG"))
	}, timeout).Should(Succeed())

	nic := &netv1.NIC{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nic-bm0"}, nic)).To(Succeed())
	g.Expect(nic.Status.NICs).To(BeEmpty(), "a refused host's cards are given no network")
	g.Expect(sw1.PortVersions(t)).To(Equal(versions1), "leaf1 was written to")
	g.Expect(sw2.PortVersions(t)).To(Equal(versions2), "leaf2 was written to")
}
