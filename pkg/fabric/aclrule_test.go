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
