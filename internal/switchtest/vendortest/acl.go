package vendortest

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// eosPortName is the name EOS shows for a well-known port in an access list entry.
var eosPortName = map[int]string{20: "ftp-data", 21: "ftp", 22: "ssh", 23: "telnet", 25: "smtp", 53: "domain",
	67: "bootps", 68: "bootpc", 69: "tftp", 80: "www", 110: "pop3", 123: "ntp", 161: "snmp", 179: "bgp",
	389: "ldap", 443: "https", 514: "syslog"}

// aclLine handles EOS's access-list lines: "[no] ip|ipv6 access-list NAME" in configuration
// mode, "SEQ remark TEXT" and "SEQ permit|deny ..." in the list's mode, and "[no] ip|ipv6
// access-group NAME in|out" on interfaces. handled is false for any other line.
func (c *iosLike) aclLine(cfg *Config, st *shellState, no bool, f []string, cmd string) (string, bool) {
	switch {
	case st.mode == "config-acl":
		return c.aclEntry(cfg, st.context, no, f, cmd), true
	case len(f) == 3 && (f[0] == "ip" || f[0] == "ipv6") && f[1] == "access-list" && st.mode == "config":
		name := f[2]
		if len(name) > 100 || strings.ContainsAny(name, " ?") {
			return c.invalid(cmd) + "\n", true
		}
		var msg string
		cfg.edit(func(map[int]string, map[string]*PortConfig) {
			a, ok := cfg.acls[name]
			switch {
			case no:
				delete(cfg.acls, name) // EOS says nothing when the list does not exist
			case ok && a.V6 != (f[0] == "ipv6"):
				msg = "% Access-list " + name + " is of another type"
			case !ok:
				cfg.acls[name] = &ACLConfig{V6: f[0] == "ipv6", Entries: map[int]string{}}
			}
		})
		if msg != "" {
			return msg + "\n", true
		}
		if !no {
			st.mode, st.context, st.aclV6 = "config-acl", name, f[0] == "ipv6"
		}
		return "", true
	case c.nxosACLs && len(f) == 5 && f[1] == "port" && st.mode == "config-if" &&
		((f[0] == "ip" && f[2] == "access-group") || (f[0] == "ipv6" && f[2] == "traffic-filter")):
		// NX-OS port lists filter inbound only.
		if f[4] != "in" {
			return c.invalid(cmd) + "\n", true
		}
		return c.bindACL(cfg, st, no, f[0], f[3], strings.Join(f, " ")), true
	case len(f) == 4 && (f[0] == "ip" || f[0] == "ipv6") && f[1] == "access-group" && st.mode == "config-if" && (f[3] == "in" || f[3] == "out"):
		line := strings.Join(f, " ")
		cfg.edit(func(_ map[int]string, ports map[string]*PortConfig) {
			for _, name := range st.ports {
				p := ports[name]
				// One list per family and direction: a new one replaces the old.
				p.AccessGroups = slices.DeleteFunc(p.AccessGroups, func(g string) bool {
					gf := strings.Fields(g)
					return gf[0] == f[0] && gf[3] == f[3] && (!no || gf[2] == f[2])
				})
				if !no {
					p.AccessGroups = append(p.AccessGroups, line)
				}
			}
		})
		return "", true
	}
	return "", false
}

// aclEntry adds (or with no, removes) one entry of the list being configured.
func (c *iosLike) aclEntry(cfg *Config, name string, no bool, f []string, cmd string) string {
	if c.os10ACLs {
		// OS10: "seq N ENTRY", "no seq N".
		if f[0] != "seq" || len(f) < 2 {
			return c.invalid(cmd) + "\n"
		}
		f = f[1:]
	}
	seq, err := strconv.Atoi(f[0])
	if err != nil || seq < 1 || seq > 4294967295 {
		return c.invalid(cmd) + "\n"
	}
	var msg string
	cfg.edit(func(map[int]string, map[string]*PortConfig) {
		a := cfg.acls[name]
		if no {
			delete(a.Entries, seq)
			return
		}
		if _, dup := a.Entries[seq]; dup {
			msg = "% Error: Duplicate sequence number"
			return
		}
		entryText := eosEntryText
		if c.os10ACLs {
			entryText = os10EntryText
		}
		if c.nxosACLs {
			entryText = nxosEntryText
		}
		text, ok := entryText(a.V6, f[1:])
		if !ok {
			msg = c.invalid(cmd)
			return
		}
		a.Entries[seq] = text
	})
	if msg != "" {
		return msg + "\n"
	}
	return ""
}

// eosEntryText checks an entry as EOS parses it and returns it as EOS shows it (well-known ports
// by name, a single address as host X); ok is false for an entry EOS refuses.
func eosEntryText(v6 bool, f []string) (string, bool) {
	if len(f) >= 2 && f[0] == "remark" {
		return strings.Join(f, " "), true
	}
	return entryText(v6, f, "icmpv6", eosPortName, true)
}

// os10EntryText checks an entry (after "seq N") as OS10 parses it and returns it as typed: ICMP
// is "icmp" in both families (in an IPv6 list, ICMPv6).
func os10EntryText(v6 bool, f []string) (string, bool) {
	return entryText(v6, f, "icmp", nil, false)
}

// nxosEntryText checks an entry as NX-OS parses it and returns it as typed: a remark, or an
// entry whose ICMP is "icmp" in both families (in an IPv6 list, ICMPv6).
func nxosEntryText(v6 bool, f []string) (string, bool) {
	if len(f) >= 2 && f[0] == "remark" {
		return strings.Join(f, " "), true
	}
	return entryText(v6, f, "icmp", nil, false)
}

// entryText checks "ACTION PROTO SRC DST [eq P | range A B]": icmp6 is the IPv6 list's ICMP
// word, portNames the ports shown by name, hostWord whether a single address shows as "host X".
func entryText(v6 bool, f []string, icmp6 string, portNames map[int]string, hostWord bool) (string, bool) {
	if len(f) < 4 || (f[0] != "permit" && f[0] != "deny") {
		return "", false
	}
	protos := map[string]bool{"ip": !v6, "ipv6": v6, "tcp": true, "udp": true}
	if !v6 {
		protos["icmp"] = true
	} else {
		protos[icmp6] = true
	}
	if !protos[f[1]] {
		return "", false
	}
	out := []string{f[0], f[1]}
	rest := f[2:]
	for range 2 {
		if len(rest) == 0 {
			return "", false
		}
		if rest[0] == "any" {
			out, rest = append(out, "any"), rest[1:]
			continue
		}
		p, err := netip.ParsePrefix(rest[0])
		if err != nil || p.Addr().Is6() != v6 || p.Masked() != p {
			return "", false
		}
		if p.IsSingleIP() && hostWord {
			out = append(out, "host", p.Addr().String())
		} else {
			out = append(out, p.String())
		}
		rest = rest[1:]
	}
	port := func(s string) (string, bool) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > 65535 {
			return "", false
		}
		if name, ok := portNames[n]; ok {
			return name, true
		}
		return s, true
	}
	switch {
	case len(rest) == 0:
	case len(rest) == 2 && rest[0] == "eq" && (f[1] == "tcp" || f[1] == "udp"):
		p, ok := port(rest[1])
		if !ok {
			return "", false
		}
		out = append(out, "eq", p)
	case len(rest) == 3 && rest[0] == "range" && (f[1] == "tcp" || f[1] == "udp"):
		lo, ok1 := port(rest[1])
		hi, ok2 := port(rest[2])
		a, _ := strconv.Atoi(rest[1])
		b, _ := strconv.Atoi(rest[2])
		if !ok1 || !ok2 || a > b {
			return "", false
		}
		out = append(out, "range", lo, hi)
	default:
		return "", false
	}
	return strings.Join(out, " "), true
}

// eosACLSections are the access lists as "show running-config | json" shows them: a section
// per list, its entries "SEQ TEXT".
func eosACLSections(cfg *Config, top map[string]any) {
	for _, name := range cfg.ACLNames() {
		a, _ := cfg.ACL(name)
		cmds := map[string]any{}
		for _, seq := range slices.Sorted(maps.Keys(a.Entries)) {
			cmds[fmt.Sprintf("%d %s", seq, a.Entries[seq])] = nil
		}
		kw := "ip"
		if a.V6 {
			kw = "ipv6"
		}
		top[kw+" access-list "+name] = map[string]any{"cmds": cmds}
	}
}

// bindACL binds (or with no, unbinds) list name of family kw ("ip", "ipv6") inbound on the
// interfaces being configured, as the line typed: NX-OS's port bindings, one list per family.
func (c *iosLike) bindACL(cfg *Config, st *shellState, no bool, kw, name, line string) string {
	cfg.edit(func(_ map[int]string, ports map[string]*PortConfig) {
		for _, port := range st.ports {
			p := ports[port]
			p.AccessGroups = slices.DeleteFunc(p.AccessGroups, func(g string) bool {
				gf := strings.Fields(g)
				return gf[0] == kw && (!no || gf[3] == name)
			})
			if !no {
				p.AccessGroups = append(p.AccessGroups, line)
			}
		}
	})
	return ""
}

// nxosRunningConfigACLs is NX-OS's "show running-config aclmgr": text, each list's entries
// indented under it with their sequence numbers.
func nxosRunningConfigACLs(s *Server) string {
	var b strings.Builder
	b.WriteString("\n!Command: show running-config aclmgr\n!Running configuration last done at: Thu Nov 26 16:00:00 2026\n\nversion 10.3(4a) Bios:version\n")
	for _, name := range s.Config.ACLNames() {
		a, _ := s.Config.ACL(name)
		kw := "ip"
		if a.V6 {
			kw = "ipv6"
		}
		fmt.Fprintf(&b, "%s access-list %s\n", kw, name)
		for _, seq := range slices.Sorted(maps.Keys(a.Entries)) {
			fmt.Fprintf(&b, "  %d %s\n", seq, a.Entries[seq])
		}
	}
	return b.String()
}
