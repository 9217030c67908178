package vendortest

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Junos firewall filters of family ethernet-switching, as a switch's candidate keeps them:
// Config.acls by filter name, each entry a statement after "filter NAME" ("term T from
// ip-protocol tcp", "term T then discard") keyed by the order it was first set, so terms show
// in the order they were made. A port's bindings are its AccessGroups, "filter input NAME" and
// "filter output NAME".

// junosFilterStatement applies "set|delete firewall family ethernet-switching filter NAME ..."
// (f after "firewall"); it returns the switch's answer ("" when accepted).
func junosFilterStatement(c *Config, set bool, f []string) string {
	syntax := strings.Repeat(" ", 14) + "^\nsyntax error.\n"
	if len(f) < 4 || f[0] != "family" || f[1] != "ethernet-switching" || f[2] != "filter" || len(f[3]) > 64 {
		return syntax
	}
	name, rest := f[3], f[4:]
	a, exists := c.acls[name]
	switch {
	case !set && len(rest) == 0:
		if !exists {
			return "warning: statement not found\n"
		}
		delete(c.acls, name)
		return ""
	case !set && len(rest) == 2 && rest[0] == "term":
		if !exists {
			return "warning: statement not found\n"
		}
		maps.DeleteFunc(a.Entries, func(_ int, s string) bool { return strings.HasPrefix(s, "term "+rest[1]+" ") })
		return ""
	case !set || len(rest) < 4 || rest[0] != "term":
		return syntax
	}
	stmt := strings.Join(rest, " ")
	term, kind, cond := rest[1], rest[2], rest[3:]
	switch {
	case kind == "then" && len(cond) == 1 && (cond[0] == "accept" || cond[0] == "discard"):
	case kind == "from" && junosCondition(cond):
	default:
		return syntax
	}
	if !exists {
		a = &ACLConfig{Entries: map[int]string{}}
		c.acls[name] = a
	}
	if kind == "then" {
		// accept and discard are one choice: the new one replaces the other.
		maps.DeleteFunc(a.Entries, func(_ int, s string) bool { return strings.HasPrefix(s, "term "+term+" then ") })
	}
	if !slices.Contains(slices.Collect(maps.Values(a.Entries)), stmt) {
		next := 1
		if len(a.Entries) > 0 {
			next = slices.Max(slices.Collect(maps.Keys(a.Entries))) + 1
		}
		a.Entries[next] = stmt
	}
	return ""
}

// junosCondition says whether a term's match condition (after "from") is one of those the
// emulation knows, with a value of the right kind.
func junosCondition(c []string) bool {
	port := func(s string) bool {
		lo, hi, isRange := strings.Cut(s, "-")
		if !isRange {
			hi = lo
		}
		a, errA := strconv.Atoi(lo)
		b, errB := strconv.Atoi(hi)
		return errA == nil && errB == nil && a >= 0 && b <= 65535 && a <= b
	}
	prefix := func(s string, v6 bool) bool {
		p, err := netip.ParsePrefix(s)
		return err == nil && p.Addr().Is6() == v6
	}
	proto := func(s string, names ...string) bool {
		n, err := strconv.Atoi(s)
		return slices.Contains(names, s) || (err == nil && n >= 0 && n <= 255)
	}
	if len(c) == 4 && c[0] == "ip-version" && c[1] == "ipv6" {
		switch c[2] {
		case "next-header":
			return proto(c[3], "tcp", "udp", "icmp6")
		case "destination-port":
			return port(c[3])
		case "ip6-source-address", "ip6-destination-address":
			return prefix(c[3], true)
		}
		return false
	}
	if len(c) != 2 {
		return false
	}
	switch c[0] {
	case "ip-protocol":
		return proto(c[1], "tcp", "udp", "icmp")
	case "destination-port":
		return port(c[1])
	case "ip-source-address", "ip-destination-address":
		return prefix(c[1], false)
	}
	return false
}

// junosFilterBinding handles an interface's "unit 0 family ethernet-switching filter ..." (f
// after "filter"): set input|output NAME, delete input|output, delete the whole filter.
func junosFilterBinding(p *PortConfig, set bool, f []string) string {
	drop := func(way string) {
		p.AccessGroups = slices.DeleteFunc(p.AccessGroups, func(g string) bool { return way == "" || strings.HasPrefix(g, "filter "+way+" ") })
	}
	switch {
	case set && len(f) == 2 && (f[0] == "input" || f[0] == "output"):
		drop(f[0])
		p.AccessGroups = append(p.AccessGroups, "filter "+f[0]+" "+f[1])
	case !set && len(f) == 1 && (f[0] == "input" || f[0] == "output"):
		drop(f[0])
	case !set && len(f) == 0:
		drop("")
	default:
		return "syntax"
	}
	return ""
}

// junosFilterCheck is commit check for a port's bindings: each names a filter that exists.
func junosFilterCheck(acls map[string]*ACLConfig, name string, p *PortConfig) string {
	for _, g := range p.AccessGroups {
		f := strings.Fields(g)
		if len(f) != 3 {
			continue
		}
		if _, ok := acls[f[2]]; !ok {
			return fmt.Sprintf("[edit interfaces %s unit 0 family ethernet-switching filter]\n  '%s %s'\n    Referenced filter '%s' is not defined\n"+
				"error: configuration check-out failed\n", name, f[1], f[2], f[2])
		}
	}
	return ""
}

// junosFilterShow adds a port's bindings to its unit 0 ethernet-switching entry of "show
// configuration interfaces | display json".
func junosFilterShow(p PortConfig, es map[string]any) {
	filter := map[string]any{}
	for _, g := range p.AccessGroups {
		if f := strings.Fields(g); len(f) == 3 && f[0] == "filter" {
			filter[f[1]] = f[2]
		}
	}
	if len(filter) > 0 {
		es["filter"] = filter
	}
}

// junosFilters prints "show configuration firewall family ethernet-switching | display json":
// each filter's terms in the order they were made, a term's conditions as Junos groups them.
func junosFilters(c *Config) string {
	names := c.ACLNames()
	filters := make([]any, 0, len(names))
	for _, name := range names {
		a, _ := c.ACL(name)
		var order []string
		terms := map[string]map[string]any{}
		for _, seq := range slices.Sorted(maps.Keys(a.Entries)) {
			f := strings.Fields(a.Entries[seq])
			tname := f[1]
			t, ok := terms[tname]
			if !ok {
				t = map[string]any{"name": tname}
				terms[tname] = t
				order = append(order, tname)
			}
			if f[2] == "then" {
				t["then"] = map[string]any{f[3]: []any{nil}}
				continue
			}
			from, _ := t["from"].(map[string]any)
			if from == nil {
				from = map[string]any{}
				t["from"] = from
			}
			cond := f[3:]
			if cond[0] == "ip-version" {
				v, _ := from["ip-version"].(map[string]any)
				if v == nil {
					v = map[string]any{"ipv6": map[string]any{}}
					from["ip-version"] = v
				}
				from, cond = v["ipv6"].(map[string]any), cond[2:]
			}
			if strings.HasSuffix(cond[0], "-address") {
				list, _ := from[cond[0]].([]any)
				from[cond[0]] = append(list, map[string]any{"name": cond[1]})
				continue
			}
			list, _ := from[cond[0]].([]any)
			from[cond[0]] = append(list, cond[1])
		}
		list := make([]any, 0, len(order))
		for _, n := range order {
			list = append(list, terms[n])
		}
		filters = append(filters, map[string]any{"name": name, "term": list})
	}
	if len(filters) == 0 {
		return mustJSON(map[string]any{"configuration": map[string]any{}})
	}
	return mustJSON(map[string]any{"configuration": map[string]any{"firewall": map[string]any{"family": map[string]any{
		"ethernet-switching": map[string]any{"filter": filters}}}}})
}
