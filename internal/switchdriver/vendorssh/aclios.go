package vendorssh

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// Access lists on EOS (see acl.go for the four lists and their remarks):
//
//	ensure-acl: per list: no ip access-list NAME-in / ip access-list NAME-in / 10 remark ... /
//	            20 ... / exit (ipv6 access-list for NAME-in6 and NAME-out6), then
//	            interface P / ip access-group NAME-in in / ip access-group NAME-out out /
//	            ipv6 access-group NAME-in6 in / ipv6 access-group NAME-out6 out / exit
//	            (P the port, or the bond's port-channel); a list that moved is first unbound
//	            from its old interface
//	remove-acl: interface P / no ip access-group NAME-in in / ... / exit, then
//	            no ip access-list NAME-in (each of the four)
//
// A list is rewritten whole (removed, then typed again): between the two the interface refers
// to a list that does not exist, which EOS passes; the next lines of the batch close it again.

// aclIface is the interface an ACL is bound to: its port, or its bond's port-channel (as the
// switch names it, or as a new bond of its members is numbered).
func (d lagDialect) aclIface(have fabric.State, a fabric.ACL) (string, error) {
	if len(a.Members) == 0 {
		return a.Port, nil
	}
	if l, ok := have.LAGs[a.Port]; ok && l.Port.Name != "" {
		return l.Port.Name, nil
	}
	n, err := d.channel(a.Members)
	if err != nil {
		return "", err
	}
	return d.prefix + strconv.Itoa(n), nil
}

// bindLines bind (or, with no, unbind) an ACL's four lists on an interface.
func bindLines(name, iface string, no bool) []string {
	lines := []string{"interface " + iface}
	for _, l := range aclLists {
		line := fmt.Sprintf("%s access-group %s%s %s", l.keyword(), name, l.suffix, l.way())
		if no {
			line = "no " + line
		}
		lines = append(lines, line)
	}
	return append(lines, "exit")
}

// renderACL writes an ensure-acl or remove-acl change.
func (d lagDialect) renderACL(have fabric.State, i int, c fabric.Change) ([]string, error) {
	a := c.ACL
	cur, exists := have.ACLs[a.Name]
	var lines []string
	if exists && cur.Port != "" {
		old, err := d.aclIface(have, cur)
		if err != nil {
			return nil, fmt.Errorf("change %d (%s): %w", i, c, err)
		}
		newIface := ""
		if c.Op == fabric.OpEnsureACL {
			if newIface, err = d.aclIface(have, a); err != nil {
				return nil, fmt.Errorf("change %d (%s): %w", i, c, err)
			}
		}
		if old != newIface {
			lines = append(lines, bindLines(a.Name, old, true)...)
		}
	}
	if c.Op == fabric.OpRemoveACL {
		for _, l := range aclLists {
			lines = append(lines, fmt.Sprintf("no %s access-list %s%s", l.keyword(), a.Name, l.suffix))
		}
		return lines, nil
	}
	if err := checkACL(d.os, i, c); err != nil {
		return nil, err
	}
	iface, err := d.aclIface(have, a)
	if err != nil {
		return nil, fmt.Errorf("change %d (%s): %w", i, c, err)
	}
	for _, l := range aclLists {
		list := fmt.Sprintf("%s access-list %s%s", l.keyword(), a.Name, l.suffix)
		lines = append(lines, "no "+list, list)
		for n, e := range aclEntries(a, l) {
			lines = append(lines, fmt.Sprintf("%d %s", 10*(n+1), e.text()))
		}
		lines = append(lines, "exit")
	}
	return append(lines, bindLines(a.Name, iface, false)...), nil
}

// eosPortNames are the port names EOS shows in an access list's entries instead of numbers.
var eosPortNames = map[string]string{
	"ftp-data": "20", "ftp": "21", "ssh": "22", "telnet": "23", "smtp": "25", "domain": "53",
	"bootps": "67", "bootpc": "68", "tftp": "69", "www": "80", "pop3": "110", "ntp": "123",
	"snmp": "161", "bgp": "179", "ldap": "389", "https": "443", "syslog": "514",
}

// normalEntry writes an entry as the switch shows it the way metalwire types it: port numbers
// rather than names, a host as a /32 (/128) prefix.
func normalEntry(line string) string {
	f := strings.Fields(line)
	if len(f) > 0 && f[0] == "remark" {
		return strings.Join(f, " ")
	}
	for i := 0; i < len(f); i++ {
		if n, ok := eosPortNames[f[i]]; ok && i > 0 && (f[i-1] == "eq" || f[i-1] == "range" || (i > 1 && f[i-2] == "range")) {
			f[i] = n
		}
		if f[i] == "host" && i+1 < len(f) {
			if addr, err := netip.ParseAddr(f[i+1]); err == nil {
				f = slices.Replace(f, i, i+2, netip.PrefixFrom(addr, addr.BitLen()).String())
			}
		}
	}
	return strings.Join(f, " ")
}

// parseIOSACLs reads the named ACLs from the switch's lists (list name: entries in sequence
// order, sequence numbers removed) and interface lines (secs): rebuilt from the remarks, kept
// only if every entry is the one the rule renders; bound to the interface that carries all four
// access-group lines (a port, or the port-channel of a bond in lags).
func parseIOSACLs(names []string, lists map[string][]string, secs map[string][]string, lags map[string]fabric.LAG) map[string]fabric.ACL {
	out := map[string]fabric.ACL{}
	for _, name := range names {
		mine := map[string][]string{}
		for _, l := range aclLists {
			if entries, ok := lists[name+l.suffix]; ok {
				mine[l.suffix] = entries
			}
		}
		if len(mine) == 0 {
			continue
		}
		a, ok := aclFromRemarks(name, mine)
		if ok {
			for _, l := range aclLists {
				var want []string
				for _, e := range aclEntries(a, l) {
					want = append(want, e.text())
				}
				var got []string
				for _, e := range mine[l.suffix] {
					got = append(got, normalEntry(e))
				}
				ok = ok && slices.Equal(got, want)
			}
		}
		if !ok {
			// Not as metalwire wrote it: a list that differs from every wanted one, so the
			// next change rewrites it.
			out[name] = fabric.ACL{Name: name, Rules: []fabric.ACLRule{{Direction: "drifted"}}}
			continue
		}
		a.Port, a.Members = boundTo(name, secs, lags)
		out[name] = a
	}
	return out
}

// boundTo is the port, or the bond (its name and members), whose interface carries all four
// access-group lines of list name (secs: each interface's lines); "" when none does.
func boundTo(name string, secs map[string][]string, lags map[string]fabric.LAG) (string, []string) {
	bind := bindLines(name, "", false)
	return boundByLines(bind[1:len(bind)-1], secs, lags)
}

// boundByLines is the port, or the bond (its name and members), whose interface carries every
// one of the lines bind (secs: each interface's lines); "" when none does.
func boundByLines(bind []string, secs map[string][]string, lags map[string]fabric.LAG) (string, []string) {
	for iface, lines := range secs {
		has := true
		for _, b := range bind {
			has = has && slices.Contains(lines, b)
		}
		if !has {
			continue
		}
		for _, l := range lags {
			if l.Port.Name == iface {
				return l.Name, slices.Clone(l.Members)
			}
		}
		return iface, nil
	}
	return "", nil
}

// eosACLLists reads the access lists of "show running-config | json": each list's entries in
// sequence order, sequence numbers removed.
func eosACLLists(top map[string][]string) map[string][]string {
	out := map[string][]string{}
	for section, lines := range top {
		name, ok := strings.CutPrefix(section, "ip access-list ")
		if !ok {
			name, ok = strings.CutPrefix(section, "ipv6 access-list ")
		}
		if !ok {
			continue
		}
		type entry struct {
			seq  int
			text string
		}
		var entries []entry
		for _, line := range lines {
			seq, text, _ := strings.Cut(strings.TrimSpace(line), " ")
			n, err := strconv.Atoi(seq)
			if err != nil {
				continue
			}
			entries = append(entries, entry{n, text})
		}
		slices.SortFunc(entries, func(a, b entry) int { return a.seq - b.seq })
		list := make([]string, len(entries))
		for i, e := range entries {
			list[i] = e.text
		}
		out[name] = list
	}
	return out
}
