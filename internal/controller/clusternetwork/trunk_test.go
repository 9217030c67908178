package clusternetwork_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/switchdriver"
	"github.com/metalwire/metalwire/internal/switchdriver/openvswitch"
	"github.com/metalwire/metalwire/internal/switchdriver/openvswitchssh"
	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
)

// A host with one card joins a ClusterNetwork of two trunk networks: the controller makes its
// switch port a trunk of both VLANs and nothing else. The host stands in as a second Open vSwitch
// bridge with a tagged internal port per VLAN (this kernel has no 8021q); its peers are ports the
// test itself put in VLANs 1001, 1002 and 1003, which the controller never touches.
func TestATrunkCarriesItsNetworksAndNothingElse(t *testing.T) {
	for _, tc := range realLeaves {
		t.Run(tc.name, func(t *testing.T) {
			ovstest.Require(t, "ovs-vswitchd", "ip", "ping")
			g := NewWithT(t)
			ctx := context.Background()
			ns := env.NewNamespace(t)
			f := ovstest.NewFabric(t)
			for port, tag := range map[string]string{f.H1.Port: "tag=1001", f.H3.Port: "tag=1002", f.H4.Port: "tag=1003"} {
				f.Switch.Vsctl(t, "set", "port", port, tag)
			}
			before := f.Switch.Ports(t)

			reg := &switchdriver.Registry{}
			ovsdb := openvswitch.New() // as the manager registers it: connections kept between sessions
			t.Cleanup(ovsdb.CloseIdle)
			reg.Register(ovsdb)
			reg.Register(openvswitchssh.New())
			startFabricWith(t, ns, reg)
			leaf, secret := tc.leaf(t, f.Switch, f.Bridge, ns)
			if secret != nil {
				create(t, secret)
			}
			create(t, &netv1.NetworkDevice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd1"}, Spec: netv1.NetworkDeviceSpec{Switches: []netv1.Switch{leaf}}},
				&netv1.NIC{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nic-trunkhost"},
					Spec: netv1.NICSpec{Node: "trunkhost", NetworkDeviceRef: "nd1", NICs: []netv1.HostNIC{{
						NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: "leaf1", Port: intstr.FromString(f.Trunk.Port)}},
						Capability:    netv1.NICCapability{Speed: 10000},
					}}},
				},
				&netv1.ClusterNetwork{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cn-t"},
					Spec: netv1.ClusterNetworkSpec{NetworkDeviceRef: "nd1", VLANRange: "1001-1002", Networks: []netv1.Network{
						{Name: "control", VLANID: ptr.To[int32](1001), PortMode: netv1.PortModeTrunk, NICHint: netv1.NICHint{Speed: 1000}},
						{Name: "data", VLANID: ptr.To[int32](1002), PortMode: netv1.PortModeTrunk, NICHint: netv1.NICHint{Speed: 1000}},
					}},
				})
			g.Eventually(func(g Gomega) {
				g.Expect(getCN(g, ns, "cn-t").Status.Available).To(HaveKey("trunkhost"), "a host of one card fits two trunk networks")
			}, timeout).Should(Succeed())
			selectHost(t, ns, "trunkhost", "cn-t")
			g.Eventually(func(g Gomega) {
				g.Expect(state(g, ns, "cn-t", "trunkhost").State).To(Equal(netv1.HostReady))
			}, timeout).Should(Succeed())

			nic := &netv1.NIC{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nic-trunkhost"}, nic)).To(Succeed())
			g.Expect(nic.Status.NICs).To(Equal([]*netv1.NICAssignment{{
				Network: "control", VLANID: 1001, PortMode: netv1.PortModeTrunk,
				Networks: []netv1.NetworkStatus{{Name: "control", VLANID: 1001}, {Name: "data", VLANID: 1002}},
			}}))
			row := f.Switch.Ports(t)[f.Trunk.Port]
			g.Expect(row.VLANMode).To(Equal("trunk"))
			g.Expect(row.Trunks).To(Equal([]int{1001, 1002}))
			g.Expect(row.Tag).To(BeZero(), "no native VLAN: untagged frames are dropped")

			g.Expect(ovstest.Reaches(t, f.Trunk.VLANs[1001], f.H1.Addr, 8)).To(BeTrue(), "the trunk carries VLAN 1001 to h1")
			g.Expect(ovstest.Reaches(t, f.Trunk.VLANs[1002], f.H3.Addr, 8)).To(BeTrue(), "the trunk carries VLAN 1002 to h3")
			g.Expect(ovstest.Reaches(t, f.Trunk.VLANs[1003], f.H4.Addr, 2)).To(BeFalse(), "the trunk carries VLAN 1003, which no network of the ClusterNetwork has")
			g.Expect(ovstest.Reaches(t, f.Trunk.VLANs[1001], f.H3.Addr, 2)).To(BeFalse(), "VLAN 1001 leaks into 1002")
			g.Expect(ovstest.Reaches(t, f.Trunk.VLANs[1001], f.H2.Addr, 1)).To(BeFalse(), "the trunk reaches h2 in the idle VLAN")

			// Deleting the ClusterNetwork puts the trunk port back as it was, and the peers the
			// controller never configured are as the test left them.
			g.Expect(env.Client.Delete(ctx, &netv1.ClusterNetwork{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cn-t"}})).To(Succeed())
			g.Eventually(func() bool {
				return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cn-t"}, &netv1.ClusterNetwork{}))
			}, timeout).Should(BeTrue())
			g.Eventually(func() map[string]ovstest.PortRow { return f.Switch.Ports(t) }, timeout).Should(Equal(before))
			g.Expect(ovstest.Reaches(t, f.Trunk.VLANs[1001], f.H1.Addr, 2)).To(BeFalse(), "the trunk still carries VLAN 1001 after the ClusterNetwork went")
		})
	}
}
