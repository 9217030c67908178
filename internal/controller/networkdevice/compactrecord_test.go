package networkdevice_test

import (
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/intstr"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/networkdevice"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// The record is rewritten whole on every pass, so it leaves out what is at its default (an
// access port's mode, a bond's lacp and slow rate, a list's allow) and writes the rest; read
// back, a port says the same as before either way.
func TestTheRecordLeavesDefaultsOutAndReadsTheSame(t *testing.T) {
	g := NewWithT(t)
	nd := &netv1.NetworkDevice{Spec: netv1.NetworkDeviceSpec{Switches: []netv1.Switch{{Name: "sw1"}}}}
	card := func(port string) netv1.HostNIC {
		return netv1.HostNIC{NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: "sw1", Port: intstr.FromString(port)}}}
	}
	acl := func(host string, def netv1.ACLAction) []netv1.CardACL {
		return []netv1.CardACL{{Network: "control", Name: fabric.ACLName(host, "control"), Default: def,
			Rules: []netv1.CardACLRule{{Direction: netv1.ACLIngress, Protocol: "ssh", Action: netv1.ACLDeny}}}}
	}
	host := func(name string, ports []string, a netv1.NICAssignment) netv1.NIC {
		nic := netv1.NIC{Status: netv1.NICStatus{ClusterNetwork: "cn"}}
		for _, p := range ports {
			nic.Spec.NICs = append(nic.Spec.NICs, card(p))
			nic.Status.NICs = append(nic.Status.NICs, a.DeepCopy())
		}
		return nic
	}
	slow := fabric.LAGName("h1", "control")
	fast := fabric.LAGName("h2", "control")
	static := fabric.LAGName("h3", "control")
	nics := []netv1.NIC{
		host("h1", []string{"p1", "p2"}, netv1.NICAssignment{Network: "control", VLANID: 1000, PortMode: netv1.PortModeAccess,
			LAG: &netv1.CardLAG{Name: slow, Mode: netv1.LAGLACP, LACPRate: netv1.LACPSlow}, ACLs: acl("h1", netv1.ACLAllow)}),
		host("h2", []string{"p3", "p4"}, netv1.NICAssignment{Network: "control", VLANID: 1000, PortMode: netv1.PortModeAccess,
			LAG: &netv1.CardLAG{Name: fast, Mode: netv1.LAGLACP, LACPRate: netv1.LACPFast}, ACLs: acl("h2", netv1.ACLDeny)}),
		host("h3", []string{"p5", "p6"}, netv1.NICAssignment{Network: "control", VLANID: 1000, PortMode: netv1.PortModeAccess,
			LAG: &netv1.CardLAG{Name: static, Mode: netv1.LAGStatic}}),
		host("h4", []string{"p7"}, netv1.NICAssignment{Network: "data", VLANID: 1001, PortMode: netv1.PortModeTrunk}),
		host("h5", []string{"p8"}, netv1.NICAssignment{Network: "control", VLANID: 1000, PortMode: netv1.PortModeAccess}),
	}
	want := fabric.Desired(networkdevice.PortWants(nd, nics))["sw1"]
	record := networkdevice.ConfiguredPorts(want)
	byName := map[string]netv1.ConfiguredPort{}
	for _, p := range record {
		byName[p.Name] = p
	}
	g.Expect(byName).To(HaveLen(5), "three bonds and two ports")

	written := func(p netv1.ConfiguredPort) string {
		b, err := json.Marshal(p)
		g.Expect(err).NotTo(HaveOccurred())
		return string(b)
	}
	// Defaults: not written, read back as they were.
	access, trunk := byName["p8"], byName["p7"]
	g.Expect(written(access)).To(Equal(`{"name":"p8","vlan":1000}`))
	g.Expect(access.PortMode()).To(Equal(netv1.PortModeAccess))
	p := byName[slow]
	g.Expect(written(p)).To(Equal(`{"name":"`+slow+`","vlan":1000,"lag":{"members":["p1","p2"]}}`), "its list is in the switch's record")
	g.Expect([]any{p.PortMode(), p.LAG.LAGMode(), p.LAG.Rate()}).To(Equal([]any{netv1.PortModeAccess, netv1.LAGLACP, netv1.LACPSlow}))
	// Anything else: written.
	p = byName[fast]
	g.Expect([]any{p.LAG.Mode, p.LAG.LACPRate}).To(Equal([]any{netv1.LAGMode(""), netv1.LACPFast}))
	g.Expect([]any{p.LAG.LAGMode(), p.LAG.Rate()}).To(Equal([]any{netv1.LAGLACP, netv1.LACPFast}))
	// The lists: an allow default left out, a deny written.
	lists := networkdevice.ConfiguredACLs(want)
	b, err := json.Marshal(lists)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(b)).To(Equal(`[{"rules":1,"names":["` + fabric.ACLName("h1", "control") + `"]},{"rules":1,"default":"deny","names":["` + fabric.ACLName("h2", "control") + `"]}]`))
	g.Expect([]any{lists[0].DefaultAction(), lists[1].DefaultAction()}).To(Equal([]any{netv1.ACLAllow, netv1.ACLDeny}))
	p = byName[static]
	g.Expect([]any{p.LAG.Mode, p.LAG.LAGMode(), p.LAG.Rate()}).To(Equal([]any{netv1.LAGStatic, netv1.LAGStatic, netv1.LACPRate("")}))
	g.Expect([]any{trunk.Mode, trunk.PortMode(), trunk.Trunk}).To(Equal([]any{netv1.PortModeTrunk, netv1.PortModeTrunk, []int32{1001}}))

	// A record an older manager wrote, every default spelled out, reads the same.
	old := netv1.ConfiguredPort{Name: "p8", Mode: netv1.PortModeAccess, VLAN: 1000,
		LAG: &netv1.ConfiguredLAG{Members: []string{"p1", "p2"}, Mode: netv1.LAGLACP, LACPRate: netv1.LACPSlow}, ACLs: []netv1.ConfiguredACL{{Name: "acl", Rules: 1, Default: netv1.ACLAllow}}}
	g.Expect([]any{old.PortMode(), old.LAG.LAGMode(), old.LAG.Rate(), old.ACLs[0].DefaultAction()}).To(Equal([]any{netv1.PortModeAccess, netv1.LAGLACP, netv1.LACPSlow, netv1.ACLAllow}))
}
