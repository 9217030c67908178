package vendortest

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// NVUE access lists. An NVUE list is an ACLConfig: entry 0 is its "type ipv4|ipv6", entry N its
// rule N as sorted key=value words (action, protocol, source-ip, dest-ip, l4 and dest-port: the
// tcp or udp of "match ip tcp dest-port P"). A port's bindings are its AccessGroups, "LIST
// inbound|outbound". "nv set/unset" stage lines as NVUE does, checking each value's form; "nv
// config apply" refuses a revision NVUE would not apply on a Spectrum switch (a rule without
// action, an address of the other family, a port without tcp or udp, a binding of a list that
// does not exist, an IPv6 list outbound, a port range outbound).

// cumulusACL stages "nv set|unset acl NAME ..." (a after set/unset); it returns NVUE's refusal or "".
func cumulusACL(cfg *Config, set bool, a []string, cmd string) string {
	cfg.mu.Lock()
	defer cfg.mu.Unlock()
	name := a[1]
	acl, exists := cfg.acls[name]
	switch {
	case !set && len(a) == 2:
		delete(cfg.acls, name)
		return ""
	case set && len(a) == 4 && a[2] == "type":
		if a[3] != "ipv4" && a[3] != "ipv6" {
			return fmt.Sprintf("'%s' is not one of ['ipv4', 'ipv6', 'mac']", a[3])
		}
		if !exists {
			acl = &ACLConfig{Entries: map[int]string{}}
			cfg.acls[name] = acl
		}
		acl.V6, acl.Entries[0] = a[3] == "ipv6", "type "+a[3]
		return ""
	case !set || len(a) < 6 || a[2] != "rule":
		return "Invalid config: " + cmd
	}
	id, err := strconv.Atoi(a[3])
	if err != nil || id < 1 || id > 65535 {
		return fmt.Sprintf("'%s' is not a valid rule id (1-65535)", a[3])
	}
	kv := map[string]string{}
	if !exists {
		acl = &ACLConfig{Entries: map[int]string{}}
		cfg.acls[name] = acl
	}
	for _, w := range strings.Fields(acl.Entries[id]) {
		k, v, _ := strings.Cut(w, "=")
		kv[k] = v
	}
	rest := a[4:]
	switch {
	case len(rest) == 2 && rest[0] == "action" && (rest[1] == "permit" || rest[1] == "deny"):
		kv["action"] = rest[1]
	case len(rest) == 4 && rest[0] == "match" && rest[1] == "ip" && rest[2] == "protocol":
		if !slices.Contains([]string{"tcp", "udp", "icmp", "icmpv6"}, rest[3]) {
			return fmt.Sprintf("'%s' is not a valid protocol", rest[3])
		}
		kv["protocol"] = rest[3]
	case len(rest) == 4 && rest[0] == "match" && rest[1] == "ip" && (rest[2] == "source-ip" || rest[2] == "dest-ip"):
		if _, err := netip.ParsePrefix(rest[3]); err != nil {
			return fmt.Sprintf("'%s' is not a valid ip-prefix", rest[3])
		}
		kv[rest[2]] = rest[3]
	case len(rest) == 5 && rest[0] == "match" && rest[1] == "ip" && (rest[2] == "tcp" || rest[2] == "udp") && rest[3] == "dest-port":
		if !nvuePort(rest[4]) {
			return fmt.Sprintf("'%s' is not a valid port", rest[4])
		}
		kv["l4"], kv["dest-port"] = rest[2], rest[4]
	default:
		return "Invalid config: " + cmd
	}
	words := make([]string, 0, len(kv))
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		words = append(words, k+"="+kv[k])
	}
	acl.Entries[id] = strings.Join(words, " ")
	return ""
}

// nvuePort says whether s is a port (1-65535) or a range N:M.
func nvuePort(s string) bool {
	lo, hi, isRange := strings.Cut(s, ":")
	if !isRange {
		hi = lo
	}
	a, errA := strconv.Atoi(lo)
	b, errB := strconv.Atoi(hi)
	return errA == nil && errB == nil && a >= 1 && b <= 65535 && a <= b
}

// cumulusACLBinding stages "nv set interface P acl NAME inbound|outbound" and "nv unset interface
// P acl NAME" (a after set/unset); it returns NVUE's refusal or "".
func cumulusACLBinding(cfg *Config, set bool, a []string, cmd string) string {
	cfg.mu.Lock()
	defer cfg.mu.Unlock()
	p, ok := cfg.ports[a[1]]
	if !ok {
		return fmt.Sprintf("interface %s does not exist", a[1])
	}
	name := a[3]
	switch {
	case !set && len(a) == 4:
		p.AccessGroups = slices.DeleteFunc(p.AccessGroups, func(b string) bool { return strings.HasPrefix(b, name+" ") })
	case set && len(a) == 5 && (a[4] == "inbound" || a[4] == "outbound"):
		if !slices.Contains(p.AccessGroups, name+" "+a[4]) {
			p.AccessGroups = append(p.AccessGroups, name+" "+a[4])
		}
	default:
		return "Invalid config: " + cmd
	}
	return ""
}

// cumulusACLApply is what "nv config apply" says of a revision's access lists: "" when NVUE
// applies them, else its refusal.
func cumulusACLApply(cfg *Config) string {
	cfg.mu.Lock()
	defer cfg.mu.Unlock()
	for _, name := range slices.Sorted(maps.Keys(cfg.acls)) {
		acl := cfg.acls[name]
		if acl.Entries[0] == "" {
			return fmt.Sprintf("acl %s: type is required", name)
		}
		for _, id := range slices.Sorted(maps.Keys(acl.Entries)) {
			if id == 0 {
				continue
			}
			kv := nvueWords(acl.Entries[id])
			if kv["action"] == "" {
				return fmt.Sprintf("acl %s rule %d: action is required", name, id)
			}
			for _, k := range []string{"source-ip", "dest-ip"} {
				if ip, ok := kv[k]; ok && netip.MustParsePrefix(ip).Addr().Is6() != acl.V6 {
					return fmt.Sprintf("acl %s rule %d: %s %s does not match the acl type", name, id, k, ip)
				}
			}
			if l4, ok := kv["l4"]; ok && kv["protocol"] != l4 {
				return fmt.Sprintf("acl %s rule %d: match ip %s requires match ip protocol %s", name, id, l4, l4)
			}
		}
	}
	for _, port := range slices.Sorted(maps.Keys(cfg.ports)) {
		for _, b := range cfg.ports[port].AccessGroups {
			name, way, _ := strings.Cut(b, " ")
			acl, ok := cfg.acls[name]
			if !ok {
				return fmt.Sprintf("interface %s: acl %s does not exist", port, name)
			}
			if way != "outbound" {
				continue
			}
			if acl.V6 {
				return fmt.Sprintf("interface %s: acl %s: ipv6 acls are not supported in the outbound direction on this platform", port, name)
			}
			for id, e := range acl.Entries {
				if strings.Contains(nvueWords(e)["dest-port"], ":") {
					return fmt.Sprintf("interface %s: acl %s rule %d: port ranges are not supported in the outbound direction", port, name, id)
				}
			}
		}
	}
	return ""
}

func nvueWords(e string) map[string]string {
	kv := map[string]string{}
	for _, w := range strings.Fields(e) {
		k, v, _ := strings.Cut(w, "=")
		kv[k] = v
	}
	return kv
}

// cumulusACLShow adds the access lists to "nv config show -o json"'s set tree, and a port's
// bindings to its interface entry (iface: the port's entries by name).
func cumulusACLShow(cfg *Config, set map[string]any, ifaces map[string]any) {
	acls := map[string]any{}
	for _, name := range cfg.ACLNames() {
		acl, _ := cfg.ACL(name)
		rules := map[string]any{}
		for id, e := range acl.Entries {
			if id == 0 {
				continue
			}
			kv := nvueWords(e)
			ip := map[string]any{}
			for _, k := range []string{"protocol", "source-ip", "dest-ip"} {
				if v, ok := kv[k]; ok {
					ip[k] = v
				}
			}
			if l4, ok := kv["l4"]; ok {
				ip[l4] = map[string]any{"dest-port": map[string]any{kv["dest-port"]: map[string]any{}}}
			}
			rule := map[string]any{}
			if len(ip) > 0 {
				rule["match"] = map[string]any{"ip": ip}
			}
			if act, ok := kv["action"]; ok {
				rule["action"] = map[string]any{act: map[string]any{}}
			}
			rules[strconv.Itoa(id)] = rule
		}
		entry := map[string]any{"type": strings.TrimPrefix(acl.Entries[0], "type ")}
		if len(rules) > 0 {
			entry["rule"] = rules
		}
		acls[name] = entry
	}
	if len(acls) > 0 {
		set["acl"] = acls
	}
	for _, n := range cfg.PortNames() {
		p, _ := cfg.Port(n)
		if len(p.AccessGroups) == 0 {
			continue
		}
		bound := map[string]any{}
		for _, b := range p.AccessGroups {
			name, way, _ := strings.Cut(b, " ")
			ways, _ := bound[name].(map[string]any)
			if ways == nil {
				ways = map[string]any{}
				bound[name] = ways
			}
			ways[way] = map[string]any{}
		}
		if iface, ok := ifaces[n].(map[string]any); ok {
			iface["acl"] = bound
		}
	}
}
