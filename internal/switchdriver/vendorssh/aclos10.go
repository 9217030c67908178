package vendorssh

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// Access lists on Dell OS10: the four lists of acl.go (NAME-in, -out, -in6, -out6), without
// remarks. The entries themselves say what the list is: rule I (1-based over the network's
// rules) is entry "seq 10*I" in each list it belongs to, and the default is the last entry of
// every list, "seq 10*(N+1)" for N rules. Read back rebuilds the rules from the entries and keeps
// the list only if rendering those rules again gives exactly the entries the switch shows, so a
// list edited by hand is rewritten. The host's MACs are not kept (OS10 IP lists do not match
// them), so they are not read back.
//
//	ensure-acl: a list already on the switch is first unbound (interface P / no ip access-group
//	            NAME-in in / ... / exit) and removed (no ip access-list NAME-in, each of the
//	            four); then per list: ip access-list NAME-in / seq 10 ... / exit (ipv6
//	            access-list for NAME-in6 and NAME-out6); then interface P / ip access-group NAME-in
//	            in / ip access-group NAME-out out / ipv6 access-group NAME-in6 in / ipv6
//	            access-group NAME-out6 out / exit (P the port, or the bond's port-channel)
//	remove-acl: interface P / no ip access-group NAME-in in / ... / exit, then no ip access-list
//	            NAME-in (each of the four)

// os10Entry is one numbered entry of an OS10 list.
type os10Entry struct {
	seq int
	aclEntry
}

// os10Text writes an entry as OS10 takes it after "seq N": ICMP in an IPv6 list is "icmp".
func (e aclEntry) os10Text() string {
	if e.proto == "icmpv6" {
		e.proto = "icmp"
	}
	return e.text()
}

// os10Entries are list l's entries for a (as checkACL passed it).
func os10Entries(a fabric.ACL, l aclList) []os10Entry {
	var out []os10Entry
	for n, r := range a.Rules {
		if e, ok := ruleEntry(r, l); ok {
			out = append(out, os10Entry{10 * (n + 1), e})
		}
	}
	return append(out, os10Entry{10 * (len(a.Rules) + 1), defaultEntry(a, l)})
}

// renderOS10ACL writes an ensure-acl or remove-acl change.
func renderOS10ACL(have fabric.State, i int, c fabric.Change) ([]string, error) {
	a := c.ACL
	if c.Op == fabric.OpEnsureACL {
		if err := checkACL("dellos10", i, c); err != nil {
			return nil, err
		}
	}
	var lines []string
	cur, exists := have.ACLs[a.Name]
	if exists && cur.Port != "" {
		old, err := os10LAG.aclIface(have, cur)
		if err != nil {
			return nil, fmt.Errorf("change %d (%s): %w", i, c, err)
		}
		lines = append(lines, bindLines(a.Name, old, true)...)
	}
	if exists {
		for _, l := range aclLists {
			lines = append(lines, fmt.Sprintf("no %s access-list %s%s", l.keyword(), a.Name, l.suffix))
		}
	}
	if c.Op == fabric.OpRemoveACL {
		return lines, nil
	}
	iface, err := os10LAG.aclIface(have, a)
	if err != nil {
		return nil, fmt.Errorf("change %d (%s): %w", i, c, err)
	}
	for _, l := range aclLists {
		lines = append(lines, fmt.Sprintf("%s access-list %s%s", l.keyword(), a.Name, l.suffix))
		for _, e := range os10Entries(a, l) {
			lines = append(lines, fmt.Sprintf("seq %d %s", e.seq, e.os10Text()))
		}
		lines = append(lines, "exit")
	}
	return append(lines, bindLines(a.Name, iface, false)...), nil
}

// os10ACLLists reads the access lists of "show running-configuration": each "ip access-list
// NAME" and "ipv6 access-list NAME" block's "seq N TEXT" lines, by list name and sequence.
func os10ACLLists(out string) map[string]map[int]string {
	lists := map[string]map[int]string{}
	var cur map[int]string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimRight(line, "\r ")
		if !strings.HasPrefix(line, " ") {
			cur = nil
			name, ok := strings.CutPrefix(line, "ip access-list ")
			if !ok {
				name, ok = strings.CutPrefix(line, "ipv6 access-list ")
			}
			if ok {
				cur = map[int]string{}
				lists[strings.TrimSpace(name)] = cur
			}
			continue
		}
		if cur == nil {
			continue
		}
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "seq ")
		if !ok {
			continue
		}
		seq, text, _ := strings.Cut(rest, " ")
		if n, err := strconv.Atoi(seq); err == nil {
			cur[n] = normalEntry(text)
		}
	}
	return lists
}

// parseOS10ACLs reads the named ACLs: rebuilt from their lists' entries (os10ACLFromLists),
// bound to the interface that carries all four access-group lines (a port, or the port-channel
// of a bond in lags). A list that is not as metalwire writes it reads as one that differs from
// every wanted list, so the next change rewrites it.
func parseOS10ACLs(names []string, lists map[string]map[int]string, secs map[string][]string, lags map[string]fabric.LAG) map[string]fabric.ACL {
	out := map[string]fabric.ACL{}
	for _, name := range names {
		mine := map[string]map[int]string{}
		for _, l := range aclLists {
			if entries, ok := lists[name+l.suffix]; ok {
				mine[l.suffix] = entries
			}
		}
		if len(mine) == 0 {
			continue
		}
		a, ok := os10ACLFromLists(name, mine)
		if !ok {
			a = fabric.ACL{Name: name, Rules: []fabric.ACLRule{{Direction: "drifted"}}}
		}
		a.Port, a.Members = boundTo(name, secs, lags)
		out[name] = a
	}
	return out
}

// os10ACLFromLists rebuilds an ACL from its four lists (entries by sequence, as the switch shows
// them): the default is every list's last entry, at the same sequence 10*(N+1); rule I is the
// entry at 10*I. ok is false when the lists are not exactly what those rules render.
func os10ACLFromLists(name string, lists map[string]map[int]string) (fabric.ACL, bool) {
	a := fabric.ACL{Name: name}
	defSeq := 0
	defaults := map[string]bool{}
	for _, l := range aclLists {
		entries := lists[l.suffix]
		if len(entries) == 0 {
			return a, false
		}
		top := slices.Max(slices.Collect(maps.Keys(entries)))
		if defSeq != 0 && top != defSeq {
			return a, false
		}
		defSeq = top
		f := strings.Fields(entries[top])
		if len(f) != 4 || f[1] != l.anyIP() || f[2] != "any" || f[3] != "any" {
			return a, false
		}
		defaults[f[0]] = true
	}
	if len(defaults) != 1 || defSeq%10 != 0 {
		return a, false
	}
	a.DefaultDeny = defaults["deny"]
	rules := make([]*fabric.ACLRule, defSeq/10-1)
	for _, l := range aclLists {
		for seq, text := range lists[l.suffix] {
			if seq == defSeq {
				continue
			}
			k := seq/10 - 1
			if seq%10 != 0 || k < 0 || k >= len(rules) {
				return a, false
			}
			r, ok := os10Rule(text, l)
			if !ok || (rules[k] != nil && *rules[k] != r) {
				return a, false
			}
			rules[k] = &r
		}
	}
	for _, r := range rules {
		if r == nil {
			return a, false
		}
		a.Rules = append(a.Rules, *r)
	}
	for _, l := range aclLists {
		want := map[int]string{}
		for _, e := range os10Entries(a, l) {
			want[e.seq] = normalEntry(e.os10Text())
		}
		if !maps.Equal(want, lists[l.suffix]) {
			return a, false
		}
	}
	return a, true
}

// os10Rule reads one entry of list l as the rule it renders (normalEntry's form: port numbers,
// a host as a /32 or /128 prefix); ok is false for an entry no rule renders.
func os10Rule(text string, l aclList) (fabric.ACLRule, bool) {
	f := strings.Fields(text)
	if len(f) < 4 {
		return fabric.ACLRule{}, false
	}
	r := fabric.ACLRule{Direction: l.dir}
	switch f[0] {
	case "permit":
		r.Action = fabric.ActionAllow
	case "deny":
		r.Action = fabric.ActionDeny
	default:
		return r, false
	}
	// The remote is the destination of an ingress rule, the source of an egress one; the
	// other end is any.
	remote, other := f[3], f[2]
	if l.dir == fabric.DirectionEgress {
		remote, other = f[2], f[3]
	}
	if other != "any" {
		return r, false
	}
	if remote != "any" {
		r.Remote = remote
	}
	ports := f[4:]
	switch {
	case f[1] == l.anyIP() && len(ports) == 0:
		r.Protocol = "all"
	case f[1] == "icmp" && len(ports) == 0:
		r.Protocol = "icmp"
	case (f[1] == "tcp" || f[1] == "udp") && len(ports) == 2 && ports[0] == "eq":
		r.Protocol = f[1] + ":" + ports[1]
	case (f[1] == "tcp" || f[1] == "udp") && len(ports) == 3 && ports[0] == "range":
		r.Protocol = f[1] + ":" + ports[1] + "-" + ports[2]
	default:
		return r, false
	}
	return r, true
}
