package clusternetwork_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
)

// A network with an acl, or with portStatus down, on a switch whose driver can do neither
// (Equinix Metal's API has no per-port list and cannot shut a port), or with an acl on a trunk of
// a switch whose lists cannot match one VLAN (EOS), or with an egress rule or a deny default on a
// switch whose lists filter ingress only (NX-OS), or with an egress rule NVUE cannot scope to
// the port (Cumulus: no IPv4 remote), is refused before anything is configured: PortPoliciesValid names the host, the network, the switch, its OS and what to
// do, and the host is not offered. Taking the policy away offers the host again.
func TestPortPoliciesASwitchCannotApplyAreRefused(t *testing.T) {
	metal := netv1.Switch{Name: "metal", Address: "http://127.0.0.1:1", NetworkOS: netv1.NetworkOSEquinixMetal,
		EquinixMetal: &netv1.EquinixMetalProject{ProjectID: "6b0a7e9e-3c1a-4d6b-9f55-2f1b9c8e7a10", Metro: "da"}}
	eos := netv1.Switch{Name: "metal", Address: "127.0.0.1", Port: 1, NetworkOS: netv1.NetworkOSEOS}
	nxos := netv1.Switch{Name: "metal", Address: "127.0.0.1", Port: 1, NetworkOS: netv1.NetworkOSNXOS}
	cumulus := netv1.Switch{Name: "metal", Address: "127.0.0.1", Port: 1, NetworkOS: netv1.NetworkOSCumulus}
	sonic := netv1.Switch{Name: "metal", Address: "127.0.0.1", Port: 1, NetworkOS: netv1.NetworkOSSONiC}
	denySSH := []netv1.ACLRule{{Direction: netv1.ACLIngress, Protocol: "ssh", Action: netv1.ACLDeny}}
	egress := []netv1.ACLRule{{Direction: netv1.ACLEgress, Protocol: "http", Action: netv1.ACLAllow}}
	for _, c := range []struct {
		name string
		sw   netv1.Switch
		set  func(*netv1.Network)
		want string
	}{
		{"acl", metal, func(n *netv1.Network) { n.ACL = denySSH },
			"host h1: network control has an acl, but its card 0 is on switch metal: networkOS equinix-metal binds no access list"},
		{"portStatus down", metal, func(n *netv1.Network) { n.PortStatus = netv1.PortDown },
			"host h1: network control has portStatus down, but its card 0 is on switch metal, whose networkOS equinix-metal cannot shut a port"},
		{"acl on a trunk", eos, func(n *netv1.Network) { n.ACL, n.PortMode = denySSH, netv1.PortModeTrunk },
			"host h1: network control has an acl, but its card 0 is on switch metal: networkOS eos cannot scope an access list to one VLAN of a trunk"},
		{"egress rule on a switch that filters ingress only", nxos, func(n *netv1.Network) { n.ACL = egress },
			"host h1: network control has an acl, but its card 0 is on switch metal: acl[0] is an egress rule, but networkOS nxos filters ingress only"},
		{"deny default on a switch that filters ingress only", nxos, func(n *netv1.Network) { n.ACL, n.ACLDefault = denySSH, netv1.ACLDeny },
			"host h1: network control has an acl, but its card 0 is on switch metal: aclDefault deny would also close egress, but networkOS nxos filters ingress only"},
		{"acl on a trunk on SONiC", sonic, func(n *netv1.Network) { n.ACL, n.PortMode = denySSH, netv1.PortModeTrunk },
			"host h1: network control has an acl, but its card 0 is on switch metal: networkOS sonic cannot scope an access list to one VLAN of a trunk (a SONiC ACL table bound to a port"},
		{"egress rule without an IPv4 remote on NVUE", cumulus, func(n *netv1.Network) { n.ACL = egress },
			"host h1: network control has an acl, but its card 0 is on switch metal: acl[0] is an egress rule without an IPv4 remote, but networkOS cumulus filters only IPv4 outbound on a port"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := NewWithT(t)
			ns := env.NewNamespace(t)
			startFabricWith(t, ns, nil)
			cn := clusterNetwork(ns, "cn-a", "1001-1001", "control")
			c.set(&cn.Spec.Networks[0])
			create(t, &netv1.NetworkDevice{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd1"},
				Spec:       netv1.NetworkDeviceSpec{Switches: []netv1.Switch{c.sw}},
			}, &netv1.NIC{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nic-h1"},
				Spec: netv1.NICSpec{Node: "h1", NetworkDeviceRef: "nd1", NICs: []netv1.HostNIC{{
					NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: "metal", Port: intstr.FromString("d1/eth1")}},
					Capability:    netv1.NICCapability{Speed: 1000},
				}}},
			}, cn)
			g.Eventually(func(g Gomega) {
				cn := getCN(g, ns, "cn-a")
				cond := meta.FindStatusCondition(cn.Status.Conditions, netv1.ConditionPortPoliciesValid)
				g.Expect(cond).NotTo(BeNil())
				g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
				g.Expect(cond.Reason).To(Equal(netv1.ReasonPortPolicyRefused))
				g.Expect(cond.Message).To(ContainSubstring(c.want))
				g.Expect(cn.Status.Available).NotTo(HaveKey("h1"))
			}, timeout).Should(Succeed())

			g.Eventually(func(g Gomega) {
				cur := getCN(g, ns, "cn-a")
				cur.Spec.Networks[0].ACL, cur.Spec.Networks[0].PortStatus, cur.Spec.Networks[0].PortMode = nil, netv1.PortUp, netv1.PortModeAccess
				cur.Spec.Networks[0].ACLDefault = ""
				g.Expect(env.Client.Update(t.Context(), cur)).To(Succeed())
			}, timeout).Should(Succeed())
			g.Eventually(func(g Gomega) {
				cn := getCN(g, ns, "cn-a")
				g.Expect(meta.IsStatusConditionTrue(cn.Status.Conditions, netv1.ConditionPortPoliciesValid)).To(BeTrue())
				g.Expect(cn.Status.Available).To(HaveKey("h1"))
			}, timeout).Should(Succeed())
		})
	}
}
