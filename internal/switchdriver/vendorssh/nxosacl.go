package vendorssh

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// Access lists on NX-OS. Its port access lists filter only what a port receives, so NX-OS keeps
// the lists of ingress rules with the default allow (fabric.ACLFits; anything else is refused
// before a line is sent): two lists, NAME-in (ip access-list) and NAME-in6 (ipv6 access-list),
// with EOS's entries and remarks (acl.go; ICMPv6 is "icmp" in an NX-OS IPv6 list), bound to the
// port (or the bond's port-channel) with "ip port access-group NAME-in in" and "ipv6 port
// traffic-filter NAME-in6 in". What the host is sent passes unfiltered, as the default allow says.

// nxosLists are the lists NX-OS binds: the ingress ones.
var nxosLists = []aclList{aclLists[0], aclLists[2]}

// nxosText writes an entry as NX-OS takes it.
func nxosText(e aclEntry) string {
	if e.proto == "icmpv6" {
		e.proto = "icmp"
	}
	return e.text()
}

// nxosBindLines bind (or, with no, unbind) a list's two lists inbound on an interface.
func nxosBindLines(name, iface string, no bool) []string {
	lines := []string{"ip port access-group " + name + "-in in", "ipv6 port traffic-filter " + name + "-in6 in"}
	if no {
		for i := range lines {
			lines[i] = "no " + lines[i]
		}
	}
	return append(append([]string{"interface " + iface}, lines...), "exit")
}

// renderNXOSACL writes an ensure-acl or remove-acl change (in configuration mode):
//
//	ensure-acl: a list bound to another interface is first unbound there; a list the switch has
//	            is removed (no ip access-list NAME-in / no ipv6 access-list NAME-in6); then
//	            ip access-list NAME-in / 10 remark ... / 20 ... / exit, the same for
//	            ipv6 access-list NAME-in6, then interface P / ip port access-group NAME-in in /
//	            ipv6 port traffic-filter NAME-in6 in / exit
//	remove-acl: interface P / no ip port access-group NAME-in in / no ipv6 port traffic-filter
//	            NAME-in6 in / exit / no ip access-list NAME-in / no ipv6 access-list NAME-in6
func renderNXOSACL(have fabric.State, i int, c fabric.Change) ([]string, error) {
	a := c.ACL
	cur, exists := have.ACLs[a.Name]
	var lines []string
	if exists && cur.Port != "" {
		old, err := nxosLAG.aclIface(have, cur)
		if err != nil {
			return nil, fmt.Errorf("change %d (%s): %w", i, c, err)
		}
		iface := ""
		if c.Op == fabric.OpEnsureACL {
			if iface, err = nxosLAG.aclIface(have, a); err != nil {
				return nil, fmt.Errorf("change %d (%s): %w", i, c, err)
			}
		}
		if old != iface {
			lines = append(lines, nxosBindLines(a.Name, old, true)...)
		}
	}
	drop := func() {
		for _, l := range nxosLists {
			lines = append(lines, fmt.Sprintf("no %s access-list %s%s", l.keyword(), a.Name, l.suffix))
		}
	}
	if c.Op == fabric.OpRemoveACL {
		drop()
		return lines, nil
	}
	if err := checkACL("nxos", i, c); err != nil {
		return nil, err
	}
	if err := fabric.ACLFits("nxos", a); err != nil {
		return nil, fmt.Errorf("change %d (%s): %w (%w)", i, c, fabric.ErrUnsupported, err)
	}
	iface, err := nxosLAG.aclIface(have, a)
	if err != nil {
		return nil, fmt.Errorf("change %d (%s): %w", i, c, err)
	}
	if exists {
		drop()
	}
	for _, l := range nxosLists {
		lines = append(lines, fmt.Sprintf("%s access-list %s%s", l.keyword(), a.Name, l.suffix))
		for n, e := range aclEntries(a, l) {
			lines = append(lines, fmt.Sprintf("%d %s", 10*(n+1), nxosText(e)))
		}
		lines = append(lines, "exit")
	}
	return append(lines, nxosBindLines(a.Name, iface, false)...), nil
}

// nxosACLLists reads the access lists of "show running-config aclmgr": each list's entries in
// sequence order, sequence numbers removed.
func nxosACLLists(out string) map[string][]string {
	type entry struct {
		seq  int
		text string
	}
	lists := map[string][]entry{}
	name := ""
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimRight(line, "\r ")
		header, isList := strings.CutPrefix(line, "ip access-list ")
		if !isList {
			header, isList = strings.CutPrefix(line, "ipv6 access-list ")
		}
		switch {
		case isList:
			name = header
			lists[name] = nil
		case strings.HasPrefix(line, " ") && name != "":
			seq, text, _ := strings.Cut(strings.TrimSpace(line), " ")
			if n, err := strconv.Atoi(seq); err == nil {
				lists[name] = append(lists[name], entry{n, text})
			}
		default:
			name = ""
		}
	}
	out2 := make(map[string][]string, len(lists))
	for n, entries := range lists {
		slices.SortFunc(entries, func(a, b entry) int { return a.seq - b.seq })
		texts := make([]string, len(entries))
		for i, e := range entries {
			texts[i] = e.text
		}
		out2[n] = texts
	}
	return out2
}

// parseNXOSACLs reads the named lists: rebuilt from the remarks of their two lists, kept only
// if every entry is the one the rules render; bound to the interface (secs: each interface's
// lines) that carries both bindings (a port, or the port-channel of a bond in lags).
func parseNXOSACLs(names []string, lists map[string][]string, secs map[string][]string, lags map[string]fabric.LAG) map[string]fabric.ACL {
	out := map[string]fabric.ACL{}
	// The lists NX-OS has no room for read as what an ingress-only list means: egress allowed.
	open := map[string][]string{}
	for _, l := range aclLists {
		if !slices.Contains(nxosLists, l) {
			for _, e := range aclEntries(fabric.ACL{}, l) {
				open[l.suffix] = append(open[l.suffix], e.text())
			}
		}
	}
	for _, name := range names {
		mine := map[string][]string{}
		for _, l := range nxosLists {
			if entries, ok := lists[name+l.suffix]; ok {
				mine[l.suffix] = entries
			}
		}
		if len(mine) == 0 {
			continue
		}
		all := map[string][]string{}
		for k, v := range mine {
			all[k] = v
		}
		for k, v := range open {
			all[k] = v
		}
		a, ok := aclFromRemarks(name, all)
		for _, l := range nxosLists {
			if !ok {
				break
			}
			var want, got []string
			for _, e := range aclEntries(a, l) {
				want = append(want, nxosText(e))
			}
			for _, e := range mine[l.suffix] {
				got = append(got, normalEntry(e))
			}
			ok = slices.Equal(got, want)
		}
		if !ok {
			out[name] = fabric.ACL{Name: name, Rules: []fabric.ACLRule{{Direction: "drifted"}}}
			continue
		}
		bind := nxosBindLines(name, "", false)
		a.Port, a.Members = boundByLines(bind[1:len(bind)-1], secs, lags)
		out[name] = a
	}
	return out
}
