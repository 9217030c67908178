package clusternetwork

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// A host with an access list is ready once the switch's record has its list as the ClusterNetwork
// now asks it (its rule count and default): the record names the lists once for the switch
// (status.switches[].acls), or, written by a manager before that, on their ports. A list
// recorded with other rules, another default, or not at all leaves the host configuring.
func TestAHostIsReadyWhenTheSwitchRecordsItsListAsAsked(t *testing.T) {
	name := fabric.ACLName("h1", "control")
	nic := &netv1.NIC{Spec: netv1.NICSpec{NICs: []netv1.HostNIC{{NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: "sw1", Port: intstr.FromString("p1")}}}}}}
	st := netv1.NICStatus{ClusterNetwork: "cn", NICs: []*netv1.NICAssignment{{Network: "control", VLANID: 1000, PortMode: netv1.PortModeAccess,
		ACLs: []netv1.CardACL{{Network: "control", Name: name, Default: netv1.ACLDeny, Rules: []netv1.CardACLRule{
			{Direction: netv1.ACLIngress, Protocol: "ssh", Action: netv1.ACLDeny}, {Direction: netv1.ACLIngress, Protocol: "http", Action: netv1.ACLAllow}}}}}}}
	port := netv1.ConfiguredPort{Name: "p1", VLAN: 1000}
	other := fabric.ACLName("h2", "control")
	cases := []struct {
		name string
		sw   netv1.SwitchStatus
		want netv1.HostState
	}{
		{"the switch's record has it", netv1.SwitchStatus{Ports: []netv1.ConfiguredPort{port},
			ACLs: []netv1.ConfiguredACLs{{Rules: 2, Default: netv1.ACLDeny, Names: []string{other, name}}}}, netv1.HostReady},
		{"it has the list with one rule fewer", netv1.SwitchStatus{Ports: []netv1.ConfiguredPort{port},
			ACLs: []netv1.ConfiguredACLs{{Rules: 1, Default: netv1.ACLDeny, Names: []string{name}}}}, netv1.HostConfiguring},
		{"it has the list ending in allow", netv1.SwitchStatus{Ports: []netv1.ConfiguredPort{port},
			ACLs: []netv1.ConfiguredACLs{{Rules: 2, Names: []string{name}}}}, netv1.HostConfiguring},
		{"it has another host's list only", netv1.SwitchStatus{Ports: []netv1.ConfiguredPort{port},
			ACLs: []netv1.ConfiguredACLs{{Rules: 2, Default: netv1.ACLDeny, Names: []string{other}}}}, netv1.HostConfiguring},
		{"it has the list but not the port", netv1.SwitchStatus{
			ACLs: []netv1.ConfiguredACLs{{Rules: 2, Default: netv1.ACLDeny, Names: []string{name}}}}, netv1.HostConfiguring},
		{"an older record has it on the port", netv1.SwitchStatus{Ports: []netv1.ConfiguredPort{{Name: "p1", VLAN: 1000,
			ACLs: []netv1.ConfiguredACL{{Name: name, Rules: 2, Default: netv1.ACLDeny}}}}}, netv1.HostReady},
		{"an older record has it with one rule fewer", netv1.SwitchStatus{Ports: []netv1.ConfiguredPort{{Name: "p1", VLAN: 1000,
			ACLs: []netv1.ConfiguredACL{{Name: name, Rules: 1, Default: netv1.ACLDeny}}}}}, netv1.HostConfiguring},
	}
	for _, c := range cases {
		c.sw.Name, c.sw.Reachable = "sw1", true
		nd := &netv1.NetworkDevice{Status: netv1.NetworkDeviceStatus{Switches: []netv1.SwitchStatus{c.sw}}}
		if got := hostState(nic, st, configuredPortsOf(nd)); got.State != c.want {
			t.Errorf("%s: the host is %s (%s), want %s", c.name, got.State, got.Message, c.want)
		}
	}
}
