package fabric

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// benchACL is the list FABRIC_BENCH_ACL=1 gives every network: two rules, ssh denied, then
// everything allowed.
var benchACL = []netv1.ACLRule{
	{Direction: netv1.ACLIngress, Protocol: "ssh", Action: netv1.ACLDeny},
	{Direction: netv1.ACLIngress, Protocol: "all", Action: netv1.ACLAllow},
}

// cardACLs is a card's acls in its NIC status, as the controller writes them for benchACL (the
// floor writes the same size of status).
func cardACLs(network string) []netv1.CardACL {
	rules := make([]netv1.CardACLRule, 0, len(benchACL))
	for _, r := range benchACL {
		rules = append(rules, netv1.CardACLRule(r))
	}
	return []netv1.CardACL{{Network: network, Name: "acl0000000000", Rules: rules, Default: netv1.ACLAllow}}
}

// hostList is where a host's list of one network must be: on switch sw, matching the frames
// coming in on ports (the card's port, or a bond's members).
type hostList struct {
	host, network string
	sw            int
	ports         []string
}

// aclCounts is what a switch holds of metalwire's flows at the end.
type aclCounts struct{ flows, lists int }

// checkACLFlows reads every switch's flows of metalwire's cookie prefix with ovs-ofctl (not
// through the driver) and checks that each host's list is on its switch as benchACL says: on
// each of its ports a drop of TCP port 22 above a NORMAL for every frame. A list of a host that
// is not on the switch is an error too. It returns, per switch, the flows and lists found.
func checkACLFlows(t *testing.T, fleet *ovstest.Fleet, want []hostList) []aclCounts {
	t.Helper()
	bySwitch := make([]map[uint64]hostList, len(fleet.Switches))
	for i := range bySwitch {
		bySwitch[i] = map[uint64]hostList{}
	}
	for _, l := range want {
		bySwitch[l.sw][fabric.ACLCookie(l.host, l.network)] = l
	}
	counts := make([]aclCounts, len(fleet.Switches))
	bad := 0
	fail := func(format string, args ...any) {
		bad++
		if bad <= 10 {
			t.Errorf(format, args...)
		}
	}
	for i, s := range fleet.Switches {
		flows := s.DumpFlows(t, fleet.Bridges[i], fabric.CookiePrefix, fabric.CookiePrefixMask)
		byCookie := map[uint64][]ovstest.DumpedFlow{}
		for _, f := range flows {
			byCookie[f.Cookie] = append(byCookie[f.Cookie], f)
		}
		counts[i] = aclCounts{flows: len(flows), lists: len(byCookie)}
		for c := range byCookie {
			if _, ok := bySwitch[i][c]; !ok {
				fail("switch %s has flows of cookie %#x (list %s), of no host's network on it", switchName(i), c, fabric.ACLNameOfCookie(c))
			}
		}
		for c, l := range bySwitch[i] {
			if why := listProblem(byCookie[c], l.ports); why != "" {
				fail("switch %s: the list of host %s's network %s (%s, cookie %#x) %s", switchName(i), l.host, l.network, fabric.ACLNameOfCookie(c), c, why)
			}
		}
	}
	if bad > 10 {
		t.Errorf("... and %d more lists wrong", bad-10)
	}
	return counts
}

// listProblem says what is wrong with a list's flows for benchACL on ports ("" if nothing): each
// port needs a drop of TCP port 22 (IPv4 and IPv6) above a NORMAL for every frame, and no flow
// may match another port.
func listProblem(flows []ovstest.DumpedFlow, ports []string) string {
	if len(flows) == 0 {
		return "has no flows"
	}
	for _, f := range flows {
		if !slices.Contains(ports, f.InPort) {
			return fmt.Sprintf("has flow %s -> %s on port %q, not one of %v", f.Match, f.Actions, f.InPort, ports)
		}
	}
	for _, p := range ports {
		denyV4, denyV6, allow := -1, -1, -1
		for _, f := range flows {
			if f.InPort != p {
				continue
			}
			prio := priority(f)
			_, tcp := f.Field("tcp")
			_, tcp6 := f.Field("tcp6")
			port, _ := f.Field("tp_dst")
			switch {
			case f.Actions == "drop" && port == "22" && tcp:
				denyV4 = prio
			case f.Actions == "drop" && port == "22" && tcp6:
				denyV6 = prio
			case f.Actions == "NORMAL" && port == "" && !tcp && !tcp6:
				allow = prio
			}
		}
		switch {
		case denyV4 < 0 || denyV6 < 0:
			return fmt.Sprintf("drops no ssh (tcp and tcp6 to port 22) coming in on %s", p)
		case allow < 0:
			return fmt.Sprintf("passes nothing coming in on %s to NORMAL", p)
		case allow >= denyV4 || allow >= denyV6:
			return fmt.Sprintf("on %s passes everything (priority %d) before dropping ssh (%d, %d)", p, allow, denyV4, denyV6)
		}
	}
	return ""
}

func priority(f ovstest.DumpedFlow) int {
	v, _ := f.Field("priority")
	n, err := strconv.Atoi(v)
	if err != nil {
		return 32768 // ovs-ofctl leaves out the default priority
	}
	return n
}
