package clusternetwork_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
)

// The image's manager configures a network on a SmartNIC's own switch as well as on the
// top-of-rack port: a second Open vSwitch (its own database and daemon) stands between the host
// and the rack, so the host reaches the network's peer only once the card's host port is in the
// network's VLAN and the card's uplink and the rack's port trunk it; leaving undoes all three.
// Through each shipped Open vSwitch driver.
func TestControllersConfigureASmartNICsSwitch(t *testing.T) {
	for _, tc := range realLeaves {
		t.Run(tc.name, func(t *testing.T) {
			ovstest.Require(t, "ovs-vswitchd", "ip", "ping")
			g := NewWithT(t)
			ns := env.NewNamespace(t)
			f := ovstest.NewSmartNICFabric(t, "198.51.100.11", "198.51.100.99", 1001)
			startFabricWith(t, ns, nil)

			leaf, leafSecret := tc.leaf(t, f.ToR, f.ToRBridge, ns)
			card, cardSecret := tc.leaf(t, f.Card, f.CardBridge, ns)
			card.Name = "dpu1"
			if cardSecret != nil {
				cardSecret.Name, card.CredentialsRef.Name = "dpu1-login", "dpu1-login"
			}
			create(t, &netv1.NetworkDevice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd1"}, Spec: netv1.NetworkDeviceSpec{Switches: []netv1.Switch{leaf, card}}})
			for _, s := range []*corev1.Secret{leafSecret, cardSecret} {
				if s != nil {
					create(t, s)
				}
			}
			create(t, &netv1.NIC{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nic-h1"},
				Spec: netv1.NICSpec{Node: "h1", NetworkDeviceRef: "nd1", NICs: []netv1.HostNIC{{
					Name:          "ens3f0",
					NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: "leaf1", Port: intstr.FromString(f.ToRPort)}},
					Capability:    netv1.NICCapability{Speed: 1000, SmartNIC: true},
					SmartNIC:      &netv1.CardSwitch{Switch: "dpu1", HostPort: f.HostPort, UplinkPort: f.UplinkPort},
				}}},
			})
			cn := clusterNetwork(ns, "cn-a", "1001-1001", "storage")
			cn.Spec.Networks[0].VLANID = ptr.To[int32](1001)
			cn.Spec.Networks[0].NICHint.SmartNIC = true
			create(t, cn)

			g.Expect(ovstest.Reaches(t, f.Host, f.Peer.Addr, 2)).To(BeFalse(), "the host reaches the peer before it joined")
			g.Eventually(func(g Gomega) {
				g.Expect(getCN(g, ns, "cn-a").Status.Available).To(HaveKey("h1"))
			}, timeout).Should(Succeed())
			selectHost(t, ns, "h1", "cn-a")
			g.Eventually(func(g Gomega) {
				st := state(g, ns, "cn-a", "h1")
				g.Expect(st.State).To(Equal(netv1.HostReady), "host h1: %s", st.Message)
			}, timeout).Should(Succeed())

			host, uplink, rack := f.Card.Ports(t)[f.HostPort], f.Card.Ports(t)[f.UplinkPort], f.ToR.Ports(t)[f.ToRPort]
			g.Expect(host.Tag).To(Equal(1001), "the card's host port: %+v", host)
			g.Expect(uplink.Trunks).To(Equal([]int{1001}), "the card's uplink: %+v", uplink)
			g.Expect(rack.Trunks).To(Equal([]int{1001}), "the rack's port: %+v", rack)
			g.Expect(ovstest.Reaches(t, f.Host, f.Peer.Addr, 10)).To(BeTrue(), "the host does not reach the peer through its card")
			nic := &netv1.NIC{}
			g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "nic-h1"}, nic)).To(Succeed())
			g.Expect(nic.Status.NICs).To(HaveLen(1))
			g.Expect(nic.Status.NICs[0].VLANID).To(Equal(int32(1001)))

			// Nothing changed: another reconcile writes to neither switch.
			tor, dpu := f.ToR.PortVersions(t), f.Card.PortVersions(t)
			poke(t, ns)
			time.Sleep(3 * time.Second)
			g.Expect(f.ToR.PortVersions(t)).To(Equal(tor), "a reconcile with nothing changed wrote to the rack's switch")
			g.Expect(f.Card.PortVersions(t)).To(Equal(dpu), "a reconcile with nothing changed wrote to the card's switch")

			selectHost(t, ns, "h1", "")
			g.Eventually(func(g Gomega) {
				for _, p := range []ovstest.PortRow{f.Card.Ports(t)[f.HostPort], f.Card.Ports(t)[f.UplinkPort], f.ToR.Ports(t)[f.ToRPort]} {
					g.Expect(p.Tag).To(Equal(ovstest.IdleVLAN), "port %s not idle: %+v", p.Name, p)
					g.Expect(p.Trunks).To(BeEmpty(), "port %s still trunks: %+v", p.Name, p)
				}
			}, timeout).Should(Succeed())
			g.Expect(ovstest.Reaches(t, f.Host, f.Peer.Addr, 2)).To(BeFalse(), "the host still reaches the peer after leaving")
		})
	}
}
