package vendorssh

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// Access lists on the CLI switches. A host's network list (fabric.ACL) becomes four lists on
// the switch, one per direction and address family, so what a rule allows or denies holds for
// IPv4 and IPv6 alike and the default closes both: NAME-in and NAME-out (IPv4), NAME-in6 and
// NAME-out6 (IPv6), bound to the host's port (or bond) inbound (ingress: what the host sends)
// and outbound (egress: what the switch sends the host). A rule whose remote is an IPv4 CIDR is
// in the IPv4 lists only, one with an IPv6 CIDR in the IPv6 lists only; a rule without remote in
// both. Each list is:
//
//	remark metalwire macs M1,M2                  (the host's MACs; IPv4 ingress list only)
//	remark metalwire rule I ACTION PROTOCOL [REMOTE]   then the rule's entry, per rule I of the
//	                                             direction (1-based over the network's rules)
//	remark metalwire default ACTION              then permit (or deny) ip (ipv6) from any to any
//
// The remarks are what the list was made from; read back takes the rules from them and keeps
// the list only if every entry the switch shows is the one the rule renders, so a list edited
// by hand is rewritten. These IP lists filter IP traffic only: ARP and other non-IP frames pass
// whatever the default.

// aclList is one of an ACL's four switch lists.
type aclList struct {
	suffix string // "-in", "-out", "-in6", "-out6"
	dir    string // fabric.DirectionIngress or DirectionEgress
	v6     bool
}

var aclLists = []aclList{
	{"-in", fabric.DirectionIngress, false}, {"-out", fabric.DirectionEgress, false},
	{"-in6", fabric.DirectionIngress, true}, {"-out6", fabric.DirectionEgress, true},
}

// keyword is the list's configuration keyword ("ip", "ipv6") and its binding direction.
func (l aclList) keyword() string {
	if l.v6 {
		return "ipv6"
	}
	return "ip"
}

func (l aclList) way() string {
	if l.dir == fabric.DirectionIngress {
		return "in"
	}
	return "out"
}

// aclEntry is one line of a list: a remark, or an action on protocol from src to dst (CIDRs
// or "any"), tcp/udp destination ports first..last (0: any).
type aclEntry struct {
	remark      string
	action      string // permit, deny
	proto       string // ip, ipv6, tcp, udp, icmp, icmpv6
	src, dst    string
	first, last uint16
}

// checkACL refuses a list the CLI switches cannot carry: a trunk's (their port lists apply to
// every VLAN of the port; fabric.OSesWithoutTrunkACLs), a rule the fabric would refuse, a remote
// with host bits set (the switch would show it masked, and the list would never read back as
// asked).
func checkACL(os string, i int, c fabric.Change) error {
	a := c.ACL
	if a.VLAN != 0 {
		return fmt.Errorf("change %d (%s): %w (networkOS %s: a port's access list applies to every VLAN the port carries, so the list of trunk VLAN %d cannot be scoped to it; use the network as the port's access (untagged) network, or drop its acl)",
			i, c, fabric.ErrUnsupported, os, a.VLAN)
	}
	for n, r := range a.Rules {
		if r.Direction != fabric.DirectionIngress && r.Direction != fabric.DirectionEgress {
			return fmt.Errorf("change %d (%s): rule %d: direction %q: use ingress or egress", i, c, n+1, r.Direction)
		}
		if r.Action != fabric.ActionAllow && r.Action != fabric.ActionDeny {
			return fmt.Errorf("change %d (%s): rule %d: action %q: use allow or deny", i, c, n+1, r.Action)
		}
		if _, err := fabric.ParseProtocol(r.Protocol); err != nil {
			return fmt.Errorf("change %d (%s): rule %d: %w", i, c, n+1, err)
		}
		if r.Remote != "" {
			p, err := netip.ParsePrefix(r.Remote)
			if err != nil {
				return fmt.Errorf("change %d (%s): rule %d: remote %q is not a CIDR such as 10.0.0.0/8", i, c, n+1, r.Remote)
			}
			if p.Masked() != p {
				return fmt.Errorf("change %d (%s): rule %d: remote %s has host bits set; write %s", i, c, n+1, r.Remote, p.Masked())
			}
		}
	}
	for _, m := range a.HostMACs {
		if _, err := parseMAC(m); err != nil {
			return fmt.Errorf("change %d (%s): host MAC %q: %w", i, c, m, err)
		}
	}
	return nil
}

func parseMAC(s string) (string, error) {
	f := strings.Split(strings.ToLower(s), ":")
	if len(f) != 6 {
		return "", fmt.Errorf("not a MAC such as 52:54:00:12:34:56")
	}
	for _, b := range f {
		if _, err := strconv.ParseUint(b, 16, 8); err != nil || len(b) != 2 {
			return "", fmt.Errorf("not a MAC such as 52:54:00:12:34:56")
		}
	}
	return strings.Join(f, ":"), nil
}

// aclEntries are one list's lines, as checkACL passed the ACL.
func aclEntries(a fabric.ACL, l aclList) []aclEntry {
	var out []aclEntry
	if l == aclLists[0] && len(a.HostMACs) > 0 {
		macs := make([]string, len(a.HostMACs))
		for i, m := range a.HostMACs {
			macs[i], _ = parseMAC(m)
		}
		slices.Sort(macs)
		out = append(out, aclEntry{remark: "metalwire macs " + strings.Join(macs, ",")})
	}
	for n, r := range a.Rules {
		e, ok := ruleEntry(r, l)
		if !ok {
			continue
		}
		remark := fmt.Sprintf("metalwire rule %d %s %s", n+1, r.Action, r.Protocol)
		if r.Remote != "" {
			remark += " " + r.Remote
		}
		out = append(out, aclEntry{remark: remark}, e)
	}
	def := defaultEntry(a, l)
	return append(out, aclEntry{remark: "metalwire default " + map[bool]string{true: fabric.ActionDeny, false: fabric.ActionAllow}[a.DefaultDeny]}, def)
}

// anyIP is the protocol word of a list's family: ip, or ipv6.
func (l aclList) anyIP() string {
	if l.v6 {
		return "ipv6"
	}
	return "ip"
}

// ruleEntry is a rule's entry in list l (as checkACL passed it); ok is false when the rule is
// not in that list (another direction, or a remote of the other family). ICMP is icmpv6 in an
// IPv6 list.
func ruleEntry(r fabric.ACLRule, l aclList) (aclEntry, bool) {
	if r.Direction != l.dir {
		return aclEntry{}, false
	}
	if r.Remote != "" {
		p, _ := netip.ParsePrefix(r.Remote)
		if p.Addr().Is6() != l.v6 {
			return aclEntry{}, false
		}
	}
	e := aclEntry{action: "permit", src: "any", dst: "any"}
	if r.Action == fabric.ActionDeny {
		e.action = "deny"
	}
	if r.Remote != "" {
		if l.dir == fabric.DirectionIngress {
			e.dst = r.Remote
		} else {
			e.src = r.Remote
		}
	}
	p, _ := fabric.ParseProtocol(r.Protocol)
	switch p.Name {
	case "all":
		e.proto = l.anyIP()
	case "icmp":
		e.proto = "icmp"
		if l.v6 {
			e.proto = "icmpv6"
		}
	default:
		e.proto, e.first, e.last = p.Name, p.FirstPort, p.LastPort
	}
	return e, true
}

// defaultEntry is a list's last entry: the default for all of its family's traffic.
func defaultEntry(a fabric.ACL, l aclList) aclEntry {
	def := aclEntry{action: "permit", proto: l.anyIP(), src: "any", dst: "any"}
	if a.DefaultDeny {
		def.action = "deny"
	}
	return def
}

// text writes an entry as the IOS-like CLIs take it (no sequence number).
func (e aclEntry) text() string {
	if e.remark != "" {
		return "remark " + e.remark
	}
	s := fmt.Sprintf("%s %s %s %s", e.action, e.proto, e.src, e.dst)
	switch {
	case e.first != 0 && e.first == e.last:
		s += fmt.Sprintf(" eq %d", e.first)
	case e.first != 0:
		s += fmt.Sprintf(" range %d %d", e.first, e.last)
	}
	return s
}

// aclFromRemarks rebuilds an ACL from its lists' remarks (text of each list's entries, in
// sequence order, sequence numbers removed; a missing list is nil): the host MACs, the rules in
// order and the default. ok is false when the lists do not hold what metalwire writes.
func aclFromRemarks(name string, lists map[string][]string) (fabric.ACL, bool) {
	a := fabric.ACL{Name: name}
	book := newRuleBook()
	for _, l := range aclLists {
		lines, ok := lists[l.suffix]
		if !ok {
			return a, false
		}
		for _, line := range lines {
			f := strings.Fields(strings.TrimPrefix(line, "remark metalwire "))
			if !strings.HasPrefix(line, "remark metalwire ") || len(f) < 2 {
				continue
			}
			switch {
			case f[0] == "macs" && len(f) == 2:
				a.HostMACs = strings.Split(f[1], ",")
			case f[0] == "default" && len(f) == 2:
				book.defaults[f[1]] = true
			case f[0] == "rule" && (len(f) == 4 || len(f) == 5):
				n, err := strconv.Atoi(f[1])
				if err != nil || n < 1 {
					return a, false
				}
				r := fabric.ACLRule{Direction: l.dir, Action: f[2], Protocol: f[3]}
				if len(f) == 5 {
					r.Remote = f[4]
				}
				if !book.add(n, r) {
					return a, false
				}
			}
		}
	}
	ok := book.fill(&a, fabric.ActionDeny)
	return a, ok
}

// ruleBook gathers a list's rules by number, and the defaults its lists end with, as a driver
// reads them back from the switch (a rule may show in several of the lists it renders to).
type ruleBook struct {
	rules    map[int]fabric.ACLRule
	defaults map[string]bool
}

func newRuleBook() *ruleBook {
	return &ruleBook{rules: map[int]fabric.ACLRule{}, defaults: map[string]bool{}}
}

// add records rule n (from 1); false when another rule was read under that number.
func (b *ruleBook) add(n int, r fabric.ACLRule) bool {
	if prev, seen := b.rules[n]; seen && !fabric.SameRule(prev, r) {
		return false
	}
	b.rules[n] = r
	return true
}

// fill gives a its rules in order and its default, deny being the switch's word for a deny
// default: false when the lists end with different defaults or a rule's number is missing.
func (b *ruleBook) fill(a *fabric.ACL, deny string) bool {
	if len(b.defaults) != 1 {
		return false
	}
	a.DefaultDeny = b.defaults[deny]
	for n := 1; n <= len(b.rules); n++ {
		r, ok := b.rules[n]
		if !ok {
			return false
		}
		a.Rules = append(a.Rules, r)
	}
	return true
}
