package fabric

import (
	"strings"
	"testing"
)

// A rule a driver is about to write is refused with the field and the fix; a good one passes.
func TestACLRuleCheck(t *testing.T) {
	for _, c := range []struct {
		rule ACLRule
		want string // "" for none
	}{
		{ACLRule{Direction: DirectionIngress, Protocol: "tcp:1000-2000", Action: ActionAllow, Remote: "10.0.0.0/8"}, ""},
		{ACLRule{Direction: DirectionEgress, Protocol: "icmp", Action: ActionDeny, Remote: "2001:db8::/32"}, ""},
		{ACLRule{Direction: "in", Protocol: "all", Action: ActionAllow}, `direction "in": use ingress or egress`},
		{ACLRule{Direction: DirectionIngress, Protocol: "all", Action: "permit"}, `action "permit": use allow or deny`},
		{ACLRule{Direction: DirectionIngress, Protocol: "tcp:99999", Action: ActionAllow}, "ports are numbers from 1 to 65535"},
		{ACLRule{Direction: DirectionIngress, Protocol: "all", Action: ActionAllow, Remote: "10.0.0.0"}, "is not a CIDR"},
		{ACLRule{Direction: DirectionIngress, Protocol: "all", Action: ActionAllow, Remote: "10.1.2.3/8"}, "host bits set; write 10.0.0.0/8"},
	} {
		err := c.rule.Check()
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: got %v, want %q", c.rule, err, c.want)
		}
	}
}

// ACLFits refuses what an OS cannot keep, naming the OS and the fix, and passes the rest: no
// list at all, a trunk's list, and on an ingress-only OS an egress rule or a deny default.
// SONiC keeps every list but a trunk's.
func TestACLFits(t *testing.T) {
	in := ACLRule{Direction: DirectionIngress, Protocol: "ssh", Action: ActionDeny}
	out := ACLRule{Direction: DirectionEgress, Protocol: "all", Action: ActionAllow}
	for _, c := range []struct {
		os   string
		acl  ACL
		want string
	}{
		{"eos", ACL{Rules: []ACLRule{in, out}, DefaultDeny: true}, ""},
		{"eos", ACL{Rules: []ACLRule{in}, VLAN: 1001}, "networkOS eos cannot scope an access list to one VLAN of a trunk"},
		{"openvswitch", ACL{Rules: []ACLRule{in, out}, VLAN: 1001, DefaultDeny: true}, ""},
		{"equinix-metal", ACL{Rules: []ACLRule{in}}, "networkOS equinix-metal binds no access list"},
		{"nxos", ACL{Rules: []ACLRule{in, {Direction: DirectionIngress, Protocol: "all", Action: ActionDeny}}}, ""},
		{"nxos", ACL{Rules: []ACLRule{in, out}}, "acl[1] is an egress rule, but networkOS nxos filters ingress only"},
		{"nxos", ACL{Rules: []ACLRule{in}, DefaultDeny: true}, "aclDefault deny would also close egress"},
		{"nxos", ACL{Rules: []ACLRule{in}, VLAN: 7}, "networkOS nxos cannot scope"},
		// Cumulus: ingress rules of any kind, egress rules with an IPv4 remote and one port, the
		// default allow, no allow-all rule.
		{"cumulus", ACL{Rules: []ACLRule{in,
			{Direction: DirectionIngress, Protocol: "tcp:1000-2000", Action: ActionDeny, Remote: "2001:db8::/32"},
			{Direction: DirectionIngress, Protocol: "all", Action: ActionDeny},
			{Direction: DirectionEgress, Protocol: "tcp:443", Action: ActionDeny, Remote: "10.0.0.0/8"},
			{Direction: DirectionEgress, Protocol: "all", Action: ActionAllow, Remote: "192.168.0.0/16"}}}, ""},
		{"cumulus", ACL{Rules: []ACLRule{in, out}}, "acl[1] allows all traffic, but networkOS cumulus would ignore it"},
		{"cumulus", ACL{Rules: []ACLRule{{Direction: DirectionIngress, Protocol: "all", Action: ActionAllow, Remote: "::/0"}}}, "acl[0] allows all traffic"},
		{"cumulus", ACL{Rules: []ACLRule{{Direction: DirectionEgress, Protocol: "ssh", Action: ActionDeny}}}, "acl[0] is an egress rule without an IPv4 remote"},
		{"cumulus", ACL{Rules: []ACLRule{{Direction: DirectionEgress, Protocol: "ssh", Action: ActionDeny, Remote: "2001:db8::/32"}}}, "give it an IPv4 remote"},
		{"cumulus", ACL{Rules: []ACLRule{{Direction: DirectionEgress, Protocol: "udp:53-54", Action: ActionDeny, Remote: "10.0.0.0/8"}}}, "acl[0] is an egress rule on ports 53-54, but networkOS cumulus takes port ranges on ingress rules only"},
		{"cumulus", ACL{Rules: []ACLRule{in}, DefaultDeny: true}, "aclDefault deny would close IPv6 egress too"},
		{"cumulus", ACL{Rules: []ACLRule{in}, VLAN: 7}, "networkOS cumulus cannot scope"},
		// SONiC: every rule, both directions, either default; not a trunk's list.
		{"sonic", ACL{Rules: []ACLRule{in, out,
			{Direction: DirectionIngress, Protocol: "udp:1000-2000", Action: ActionDeny, Remote: "2001:db8::/32"},
			{Direction: DirectionEgress, Protocol: "tcp:1000-2000", Action: ActionAllow, Remote: "10.0.0.0/8"}}, DefaultDeny: true}, ""},
		{"sonic", ACL{Rules: []ACLRule{in}, VLAN: 7}, "networkOS sonic cannot scope an access list to one VLAN of a trunk"},
	} {
		err := ACLFits(c.os, c.acl)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s %+v: got %v, want %q", c.os, c.acl, err, c.want)
		}
	}
}
