package openconfig

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/openconfig/gnmi/proto/gnmi"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// Access lists through openconfig-acl. A host's list (fabric.ACL) is four acl-sets, one per
// direction and address family, so a rule and the default hold for IPv4 and IPv6 alike:
// NAME-in and NAME-out of type ACL_IPV4, NAME-in6 and NAME-out6 of type ACL_IPV6, bound to the
// host's port under /acl/interfaces/interface[id=PORT] as ingress-acl-sets (ingress: what the host
// sends) and egress-acl-sets (egress: what the switch sends the host). Rule i of the network
// (1-based, over all its rules) is acl-entry sequence-id 10*i of every set it belongs to (a rule
// with an IPv4 remote in the IPv4 sets only, one with an IPv6 remote in the IPv6 sets only, one
// without in all of its direction); the default is the last entry of all four, 10*(N+1) for N
// rules, with no match field. An entry matches ipv4 (ipv6) protocol IP_TCP, IP_UDP, IP_ICMP (58,
// ICMPv6, in an IPv6 set) and the remote as source-address (egress) or destination-address
// (ingress), transport destination-port N or "N..M", and forwards ACCEPT or DROP. Read back
// rebuilds the rules from the entries and keeps the list only if rendering them again gives the
// entries the switch shows. A set is written whole (replace), in the batch's one Set.

// aclSet is one of a list's four sets.
type aclSet struct {
	suffix, dir string // "-in" ..., fabric.DirectionIngress or Egress
	v6          bool
}

var aclSets = []aclSet{
	{"-in", fabric.DirectionIngress, false}, {"-out", fabric.DirectionEgress, false},
	{"-in6", fabric.DirectionIngress, true}, {"-out6", fabric.DirectionEgress, true},
}

// setType is the set's openconfig-acl type (module-qualified as RFC 7951 writes an identity).
func (s aclSet) setType() string {
	if s.v6 {
		return "ACL_IPV6"
	}
	return "ACL_IPV4"
}

// aclEntry is an acl-entry as metalwire writes it and compares it: protocol ("" any,
// "IP_TCP", "58", ...), source and destination prefixes, destination port ("22", "1000..2000"),
// forwarding action (ACCEPT, DROP).
type aclEntry struct {
	seq           int
	proto         string
	src, dst      string
	port, forward string
}

func aclPath() *gnmi.Path { return &gnmi.Path{Elem: []*gnmi.PathElem{{Name: "acl"}}} }

func aclSetPath(name string, s aclSet) *gnmi.Path {
	return &gnmi.Path{Elem: []*gnmi.PathElem{{Name: "acl"}, {Name: "acl-sets"},
		{Name: "acl-set", Key: map[string]string{"name": name + s.suffix, "type": s.setType()}}}}
}

func aclInterfacePath(port string) *gnmi.Path {
	return &gnmi.Path{Elem: []*gnmi.PathElem{{Name: "acl"}, {Name: "interfaces"}, {Name: "interface", Key: map[string]string{"id": port}}}}
}

// bindingPath is a set's binding on a port: ingress-acl-sets/ingress-acl-set[set-name][type]
// (egress for an egress set).
func bindingPath(port, name string, s aclSet) *gnmi.Path {
	p := aclInterfacePath(port)
	way := "ingress"
	if s.dir == fabric.DirectionEgress {
		way = "egress"
	}
	p.Elem = append(p.Elem, &gnmi.PathElem{Name: way + "-acl-sets"},
		&gnmi.PathElem{Name: way + "-acl-set", Key: map[string]string{"set-name": name + s.suffix, "type": s.setType()}})
	return p
}

// checkACL refuses a list this driver cannot write, before anything is sent: a trunk's (an
// interface's acl-sets apply to every VLAN it carries; fabric.OSesWithoutTrunkACLs), a bond's,
// a rule that does not check.
func checkACL(i int, c fabric.Change) error {
	a := c.ACL
	if a.VLAN != 0 {
		return fmt.Errorf("change %d (%s): %w (networkOS %s: an interface's acl-sets apply to every VLAN it carries, so the list of trunk VLAN %d cannot be scoped to it; use the network as the port's access (untagged) network, or drop its acl)",
			i, c, fabric.ErrUnsupported, NetworkOS, a.VLAN)
	}
	if len(a.Members) > 0 {
		return fmt.Errorf("change %d (%s): %w (networkOS %s binds access lists to ports, not yet to bonds)", i, c, fabric.ErrUnsupported, NetworkOS)
	}
	for n, r := range a.Rules {
		if err := r.Check(); err != nil {
			return fmt.Errorf("change %d (%s): rule %d: %w", i, c, n+1, err)
		}
	}
	return nil
}

// setEntries are the entries of one of a list's sets, as checkACL passed the list.
func setEntries(a fabric.ACL, s aclSet) []aclEntry {
	var out []aclEntry
	for n, r := range a.Rules {
		if r.Direction != s.dir {
			continue
		}
		if r.Remote != "" {
			if p, _ := netip.ParsePrefix(r.Remote); p.Addr().Is6() != s.v6 {
				continue
			}
		}
		e := aclEntry{seq: 10 * (n + 1), forward: forwardOf(r.Action)}
		if r.Remote != "" && s.dir == fabric.DirectionIngress {
			e.dst = r.Remote
		} else if r.Remote != "" {
			e.src = r.Remote
		}
		p, _ := fabric.ParseProtocol(r.Protocol)
		switch {
		case p.Name == "icmp" && s.v6:
			e.proto = "58"
		case p.Name != "all":
			e.proto = "IP_" + strings.ToUpper(p.Name)
		}
		switch {
		case p.FirstPort != 0 && p.FirstPort == p.LastPort:
			e.port = strconv.Itoa(int(p.FirstPort))
		case p.FirstPort != 0:
			e.port = fmt.Sprintf("%d..%d", p.FirstPort, p.LastPort)
		}
		out = append(out, e)
	}
	def := fabric.ActionAllow
	if a.DefaultDeny {
		def = fabric.ActionDeny
	}
	return append(out, aclEntry{seq: 10 * (len(a.Rules) + 1), forward: forwardOf(def)})
}

func forwardOf(action string) string {
	if action == fabric.ActionDeny {
		return "DROP"
	}
	return "ACCEPT"
}

// json is the entry as RFC 7951 JSON of openconfig-acl.
func (e aclEntry) json(v6 bool) map[string]any {
	entry := map[string]any{"sequence-id": e.seq, "config": map[string]any{"sequence-id": e.seq},
		"actions": map[string]any{"config": map[string]any{"forwarding-action": "openconfig-acl:" + e.forward}}}
	ip := map[string]any{}
	if e.src != "" {
		ip["source-address"] = e.src
	}
	if e.dst != "" {
		ip["destination-address"] = e.dst
	}
	if n, err := strconv.Atoi(e.proto); err == nil {
		ip["protocol"] = n
	} else if e.proto != "" {
		ip["protocol"] = "openconfig-packet-match-types:" + e.proto
	}
	if len(ip) > 0 {
		family := "ipv4"
		if v6 {
			family = "ipv6"
		}
		entry[family] = map[string]any{"config": ip}
	}
	if n, err := strconv.Atoi(e.port); err == nil {
		entry["transport"] = map[string]any{"config": map[string]any{"destination-port": n}}
	} else if e.port != "" {
		entry["transport"] = map[string]any{"config": map[string]any{"destination-port": e.port}}
	}
	return entry
}

// addACLChange adds an ensure-acl or remove-acl to the Set: a list bound elsewhere is unbound
// there (delete), a removed list's bindings and sets deleted; an ensured list's four sets
// replaced whole and its bindings merged into the port's (update).
func addACLChange(req *gnmi.SetRequest, have fabric.State, i int, c fabric.Change) error {
	a := c.ACL
	if cur, ok := have.ACLs[a.Name]; ok && cur.Port != "" && (c.Op == fabric.OpRemoveACL || cur.Port != a.Port) {
		for _, s := range aclSets {
			req.Delete = append(req.Delete, bindingPath(cur.Port, a.Name, s))
		}
	}
	if c.Op == fabric.OpRemoveACL {
		for _, s := range aclSets {
			req.Delete = append(req.Delete, aclSetPath(a.Name, s))
		}
		return nil
	}
	if err := checkACL(i, c); err != nil {
		return err
	}
	ingress, egress := []any{}, []any{}
	for _, s := range aclSets {
		name, typ := a.Name+s.suffix, "openconfig-acl:"+s.setType()
		entries := []any{}
		for _, e := range setEntries(a, s) {
			entries = append(entries, e.json(s.v6))
		}
		set := map[string]any{"name": name, "type": typ, "config": map[string]any{"name": name, "type": typ},
			"acl-entries": map[string]any{"acl-entry": entries}}
		req.Replace = append(req.Replace, &gnmi.Update{Path: aclSetPath(a.Name, s), Val: jsonVal(set)})
		bind := map[string]any{"set-name": name, "type": typ, "config": map[string]any{"set-name": name, "type": typ}}
		if s.dir == fabric.DirectionIngress {
			ingress = append(ingress, bind)
		} else {
			egress = append(egress, bind)
		}
	}
	iface := map[string]any{"id": a.Port, "config": map[string]any{"id": a.Port},
		"interface-ref":    map[string]any{"config": map[string]any{"interface": a.Port}},
		"ingress-acl-sets": map[string]any{"ingress-acl-set": ingress},
		"egress-acl-sets":  map[string]any{"egress-acl-set": egress}}
	req.Update = append(req.Update, &gnmi.Update{Path: aclInterfacePath(a.Port), Val: jsonVal(iface)})
	return nil
}

// aclJSON is /acl as RFC 7951 JSON, module names removed.
type aclJSON struct {
	ACLSets struct {
		ACLSet []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			ACLEntries struct {
				ACLEntry []struct {
					Seq  int `json:"sequence-id"`
					IPv4 struct {
						Config ipConfig `json:"config"`
					} `json:"ipv4"`
					IPv6 struct {
						Config ipConfig `json:"config"`
					} `json:"ipv6"`
					Transport struct {
						Config struct {
							DestinationPort json.RawMessage `json:"destination-port"`
							SourcePort      json.RawMessage `json:"source-port"`
						} `json:"config"`
					} `json:"transport"`
					Actions struct {
						Config struct {
							Forward string `json:"forwarding-action"`
						} `json:"config"`
					} `json:"actions"`
				} `json:"acl-entry"`
			} `json:"acl-entries"`
		} `json:"acl-set"`
	} `json:"acl-sets"`
	Interfaces struct {
		Interface []struct {
			ID      string   `json:"id"`
			Ingress aclBinds `json:"ingress-acl-sets"`
			Egress  aclBinds `json:"egress-acl-sets"`
		} `json:"interface"`
	} `json:"interfaces"`
}

type ipConfig struct {
	Src   string          `json:"source-address"`
	Dst   string          `json:"destination-address"`
	Proto json.RawMessage `json:"protocol"`
}

type aclBinds struct {
	Ingress []aclBind `json:"ingress-acl-set"`
	Egress  []aclBind `json:"egress-acl-set"`
}

type aclBind struct {
	Name string `json:"set-name"`
	Type string `json:"type"`
}

// scalarText reads a JSON number or string as text, a module prefix removed ("IP_TCP", "22",
// "1000..2000"); "" for none.
func scalarText(raw json.RawMessage) string {
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		_, name, found := strings.Cut(s, ":")
		if found {
			return name
		}
		return s
	}
	return ""
}

// parseACLs reads the named lists from /acl: rebuilt from their sets' entries, kept only if
// rendering them again gives the same entries; bound to the interface that carries all four
// sets' bindings. A list not as metalwire writes it reads as a list no wanted one equals.
func parseACLs(raw []byte, names []string) (map[string]fabric.ACL, error) {
	var doc aclJSON
	if err := decode(raw, "acl", &doc); err != nil {
		return nil, fmt.Errorf("/acl: %w", err)
	}
	sets := map[string][]aclEntry{}
	for _, s := range doc.ACLSets.ACLSet {
		var entries []aclEntry
		for _, e := range s.ACLEntries.ACLEntry {
			ip := e.IPv4.Config
			if strings.HasSuffix(s.Type, "ACL_IPV6") {
				ip = e.IPv6.Config
			}
			entry := aclEntry{seq: e.Seq, proto: scalarText(ip.Proto), src: ip.Src, dst: ip.Dst,
				port: scalarText(e.Transport.Config.DestinationPort), forward: scalarText(json.RawMessage(strconv.Quote(e.Actions.Config.Forward)))}
			if len(e.Transport.Config.SourcePort) > 0 {
				entry.forward = "?" // a match metalwire never writes
			}
			entries = append(entries, entry)
		}
		slices.SortFunc(entries, func(a, b aclEntry) int { return a.seq - b.seq })
		_, typ, _ := strings.Cut(s.Type, ":")
		if typ == "" {
			typ = s.Type
		}
		sets[s.Name+"|"+typ] = entries
	}
	out := map[string]fabric.ACL{}
	for _, name := range names {
		mine := map[string][]aclEntry{}
		for _, s := range aclSets {
			if e, ok := sets[name+s.suffix+"|"+s.setType()]; ok {
				mine[s.suffix] = e
			}
		}
		if len(mine) == 0 {
			continue
		}
		a, ok := aclOfSets(name, mine)
		if !ok {
			out[name] = fabric.ACL{Name: name, Rules: []fabric.ACLRule{{Direction: "drifted"}}}
			continue
		}
		for _, iface := range doc.Interfaces.Interface {
			bound := 0
			for _, s := range aclSets {
				binds := iface.Ingress.Ingress
				if s.dir == fabric.DirectionEgress {
					binds = iface.Egress.Egress
				}
				if slices.ContainsFunc(binds, func(b aclBind) bool {
					return b.Name == name+s.suffix && strings.HasSuffix(b.Type, s.setType())
				}) {
					bound++
				}
			}
			if bound == len(aclSets) {
				a.Port = iface.ID
			}
		}
		out[name] = a
	}
	return out, nil
}

// aclOfSets rebuilds a list from its four sets' entries (by suffix); ok is false when they do
// not hold what metalwire writes.
func aclOfSets(name string, sets map[string][]aclEntry) (fabric.ACL, bool) {
	a := fabric.ACL{Name: name}
	if len(sets) != len(aclSets) || len(sets["-in"]) == 0 {
		return a, false
	}
	def := sets["-in"][len(sets["-in"])-1]
	a.DefaultDeny = def.forward == "DROP"
	rules := make([]fabric.ACLRule, def.seq/10-1)
	seen := make([]bool, len(rules))
	for _, s := range aclSets {
		for _, e := range sets[s.suffix] {
			n := e.seq/10 - 1
			if e.seq == def.seq || e.seq%10 != 0 || n < 0 || n >= len(rules) {
				continue // the default, or an entry the comparison below refuses
			}
			r := fabric.ACLRule{Direction: s.dir, Action: fabric.ActionAllow, Protocol: "all", Remote: e.src + e.dst}
			if e.forward == "DROP" {
				r.Action = fabric.ActionDeny
			}
			switch {
			case e.proto == "IP_ICMP" || e.proto == "58":
				r.Protocol = "icmp"
			case e.proto != "" && e.port != "":
				r.Protocol = strings.ToLower(strings.TrimPrefix(e.proto, "IP_")) + ":" + strings.Replace(e.port, "..", "-", 1)
			case e.proto != "":
				return a, false
			}
			if seen[n] && !fabric.SameRule(rules[n], r) {
				return a, false
			}
			rules[n], seen[n] = r, true
		}
	}
	if slices.Contains(seen, false) {
		return a, false
	}
	a.Rules = rules
	for _, s := range aclSets {
		if !slices.Equal(setEntries(a, s), sets[s.suffix]) {
			return a, false
		}
	}
	return a, true
}
