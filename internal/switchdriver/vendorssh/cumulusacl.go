package vendorssh

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// Access lists on Cumulus Linux (NVUE). NVUE keeps only part of the model on Spectrum switches
// (fabric.OSesWithLimitedACLs: IPv6 rules match in the ingress table only, port ranges are taken
// on ingress rules only, a rule that matches everything and permits is ignored), so
// fabric.ACLFits refuses before anything is sent a list with an egress rule that lacks an IPv4
// remote or names a port range, an allow-all rule, or a deny default. What is left is kept
// exactly, in up to three NVUE lists:
//
//	NAME-in   type ipv4, bound inbound: the ingress rules without remote or with an IPv4 one
//	NAME-in6  type ipv6, bound inbound: the ingress rules without remote or with an IPv6 one
//	          (only when there are such rules)
//	NAME-out  type ipv4, bound outbound: the egress rules (only when there are any)
//
// Rule I of the network (1-based) is NVUE rule 10*I in each list it is in, so the order holds
// and read back rebuilds the rules from the lists themselves (NVUE rules carry no remark, and
// the host MACs are not recorded; fabric.SameACL allows that). The default allow is no rule:
// NVUE passes what no rule matches, and would ignore a permit-all rule anyway. NAME-in always
// exists, even empty, so a list without IPv4 ingress rules still shows where it is bound. An
// allow-all rule is refused rather than left out: NVUE would skip it and let the rules after it
// decide, and a rule left out could not be read back, so every pass would rewrite the list.
//
// Port ranges are written N:M (the form the iptables rules cl-acltool makes from NVUE's take).

// nvueList is one of a host list's NVUE lists.
type nvueList struct {
	suffix, way string // "-in", "inbound"
	list        aclList
}

var nvueLists = []nvueList{
	{"-in", "inbound", aclLists[0]}, {"-in6", "inbound", aclLists[2]}, {"-out", "outbound", aclLists[1]},
}

func (l nvueList) family() string {
	if l.list.v6 {
		return "ipv6"
	}
	return "ipv4"
}

// nvueRule is one NVUE rule's match and action, as set and as shown.
type nvueRule struct {
	action              string // permit, deny
	proto, srcIP, dstIP string // "" for any
	port                string // tcp/udp destination port: "22", "1000:2000", or ""
	unknown             bool   // the switch shows a match metalwire does not write
}

// nvueRules are list l's rules of a by NVUE rule id; ok is false when l is not made (an empty
// NAME-in6 or NAME-out).
func nvueRules(a fabric.ACL, l nvueList) (map[int]nvueRule, bool) {
	out := map[int]nvueRule{}
	for n, r := range a.Rules {
		e, in := ruleEntry(r, l.list)
		if !in {
			continue
		}
		nr := nvueRule{action: e.action}
		if e.proto != "ip" && e.proto != "ipv6" {
			nr.proto = e.proto
		}
		if e.src != "any" {
			nr.srcIP = e.src
		}
		if e.dst != "any" {
			nr.dstIP = e.dst
		}
		switch {
		case e.first != 0 && e.first == e.last:
			nr.port = strconv.Itoa(int(e.first))
		case e.first != 0:
			nr.port = fmt.Sprintf("%d:%d", e.first, e.last)
		}
		out[10*(n+1)] = nr
	}
	return out, l.suffix == "-in" || len(out) > 0
}

// lines are a rule's "nv set acl NAME rule ID ..." lines.
func (r nvueRule) lines(list string, id int) []string {
	p := fmt.Sprintf("nv set acl %s rule %d ", list, id)
	var out []string
	if r.proto != "" {
		out = append(out, p+"match ip protocol "+r.proto)
	}
	if r.srcIP != "" {
		out = append(out, p+"match ip source-ip "+r.srcIP)
	}
	if r.dstIP != "" {
		out = append(out, p+"match ip dest-ip "+r.dstIP)
	}
	if r.port != "" {
		out = append(out, p+"match ip "+r.proto+" dest-port "+r.port)
	}
	return append(out, p+"action "+r.action)
}

// cumulusUnbind are the lines that unbind a host list's NVUE lists from iface (none when "")
// and delete them: NVUE's unset of what is not there changes nothing, so all three are named.
func cumulusUnbind(name, iface string) []string {
	var lines []string
	for _, l := range nvueLists {
		if iface != "" {
			lines = append(lines, fmt.Sprintf("nv unset interface %s acl %s%s", iface, name, l.suffix))
		}
	}
	for _, l := range nvueLists {
		lines = append(lines, "nv unset acl "+name+l.suffix)
	}
	return lines
}

// renderCumulusACL writes an ensure-acl or remove-acl change (staged in the batch's revision):
//
//	ensure-acl: a list the switch has is unbound where it is and deleted (nv unset interface P acl
//	            NAME-in|-in6|-out, nv unset acl NAME-in|-in6|-out); then per list: nv set acl L type
//	            ipv4|ipv6, each rule's nv set acl L rule ID match ip protocol P / match ip
//	            source-ip|dest-ip CIDR / match ip tcp|udp dest-port N / action permit|deny, and
//	            nv set interface P acl L inbound|outbound (P the port, or the bond)
//	remove-acl: nv unset interface P acl NAME-in|-in6|-out, nv unset acl NAME-in|-in6|-out
func renderCumulusACL(have fabric.State, i int, c fabric.Change) ([]string, error) {
	a := c.ACL
	cur, exists := have.ACLs[a.Name]
	if c.Op == fabric.OpRemoveACL {
		return cumulusUnbind(a.Name, cur.Port), nil
	}
	if err := checkACL("cumulus", i, c); err != nil {
		return nil, err
	}
	if err := fabric.ACLFits("cumulus", a); err != nil {
		return nil, fmt.Errorf("change %d (%s): %w (%w)", i, c, fabric.ErrUnsupported, err)
	}
	var lines []string
	if exists {
		lines = cumulusUnbind(a.Name, cur.Port)
	}
	var binds []string
	for _, l := range nvueLists {
		rules, made := nvueRules(a, l)
		if !made {
			continue
		}
		list := a.Name + l.suffix
		lines = append(lines, fmt.Sprintf("nv set acl %s type %s", list, l.family()))
		for _, id := range slices.Sorted(maps.Keys(rules)) {
			lines = append(lines, rules[id].lines(list, id)...)
		}
		binds = append(binds, fmt.Sprintf("nv set interface %s acl %s %s", a.Port, list, l.way))
	}
	return append(lines, binds...), nil
}

// nvueACL is an access list in "nv config show -o json".
type nvueACL struct {
	Type string `json:"type"`
	Rule map[string]struct {
		Match struct {
			IP map[string]json.RawMessage `json:"ip"`
		} `json:"match"`
		Action map[string]json.RawMessage `json:"action"`
	} `json:"rule"`
}

// rules reads a list's rules by id; a value metalwire does not write reads as unknown.
func (n nvueACL) rules() map[int]nvueRule {
	out := map[int]nvueRule{}
	for k, raw := range n.Rule {
		id, err := strconv.Atoi(k)
		if err != nil {
			continue
		}
		var r nvueRule
		for act := range raw.Action {
			r.action = act
		}
		r.unknown = len(raw.Action) != 1
		for key, v := range raw.Match.IP {
			switch key {
			case "protocol":
				r.unknown = r.unknown || json.Unmarshal(v, &r.proto) != nil
			case "source-ip":
				r.unknown = r.unknown || json.Unmarshal(v, &r.srcIP) != nil
			case "dest-ip":
				r.unknown = r.unknown || json.Unmarshal(v, &r.dstIP) != nil
			case "tcp", "udp":
				var l4 map[string]map[string]json.RawMessage
				if json.Unmarshal(v, &l4) != nil || len(l4) != 1 || len(l4["dest-port"]) != 1 {
					r.unknown = true
					continue
				}
				for p := range l4["dest-port"] {
					r.port = p
				}
			default:
				r.unknown = true
			}
		}
		out[id] = r
	}
	return out
}

// cumulusACLs reads the named host lists from the configuration's acl tree and each interface's
// acl bindings: rebuilt from the rules of their NVUE lists, kept only if every list holds exactly
// what the rebuilt list renders (else one "drifted" rule, so it is rewritten), bound to the
// interface that carries all its bindings (a port, or a bond in lags).
func cumulusACLs(names []string, acls map[string]nvueACL, binds map[string]map[string]map[string]json.RawMessage, lags map[string]fabric.LAG) map[string]fabric.ACL {
	out := map[string]fabric.ACL{}
	for _, name := range names {
		shown := map[string]map[int]nvueRule{}
		ok := true
		for _, l := range nvueLists {
			if n, has := acls[name+l.suffix]; has {
				shown[l.suffix] = n.rules()
				ok = ok && n.Type == l.family()
			}
		}
		if len(shown) == 0 {
			continue
		}
		a := fabric.ACL{Name: name}
		// Each rule id read once, from the first list that has it: a rule without remote is in
		// both inbound lists, and the comparison below checks the other.
		ids := map[int]bool{}
		for _, rules := range shown {
			for id := range rules {
				ids[id] = true
			}
		}
		for _, id := range slices.Sorted(maps.Keys(ids)) {
			for _, l := range nvueLists {
				if n, has := shown[l.suffix][id]; has {
					r, good := cumulusRule(n, l)
					ok = ok && good && id == 10*(len(a.Rules)+1)
					a.Rules = append(a.Rules, r)
					break
				}
			}
		}
		var want []string
		for _, l := range nvueLists {
			rules, made := nvueRules(a, l)
			got, has := shown[l.suffix]
			ok = ok && made == has && (!made || maps.Equal(rules, got))
			if made {
				want = append(want, name+l.suffix+" "+l.way)
			}
		}
		if !ok {
			// Still where it is bound, so that rewriting it unbinds it there.
			a = fabric.ACL{Name: name, Rules: []fabric.ACLRule{{Direction: "drifted"}}}
			want = nil
		}
		a.Port, a.Members = cumulusBoundTo(name, want, binds, lags)
		out[name] = a
	}
	return out
}

// cumulusRule is the model's rule an NVUE rule of list l renders; ok is false for one it cannot
// be (a match metalwire does not write).
func cumulusRule(n nvueRule, l nvueList) (fabric.ACLRule, bool) {
	r := fabric.ACLRule{Direction: l.list.dir, Action: fabric.ActionAllow, Protocol: "all"}
	if n.action == "deny" {
		r.Action = fabric.ActionDeny
	}
	r.Remote = n.dstIP
	if l.list.dir == fabric.DirectionEgress {
		r.Remote = n.srcIP
	}
	switch n.proto {
	case "":
	case "icmp", "icmpv6":
		r.Protocol = "icmp"
	default:
		r.Protocol = n.proto + ":" + strings.Replace(n.port, ":", "-", 1)
	}
	return r, !n.unknown && (n.action == "permit" || n.action == "deny")
}

// cumulusBoundTo is the interface whose acl bindings are exactly want ("LIST way") among the
// host list's (want nil: any of them): the port, or the bond (and its members).
func cumulusBoundTo(name string, want []string, binds map[string]map[string]map[string]json.RawMessage, lags map[string]fabric.LAG) (string, []string) {
	for iface, b := range binds {
		var got []string
		for list, ways := range b {
			if !strings.HasPrefix(list, name+"-") {
				continue
			}
			for way := range ways {
				got = append(got, list+" "+way)
			}
		}
		slices.Sort(got)
		if len(got) == 0 || (want != nil && !slices.Equal(got, slices.Sorted(slices.Values(want)))) {
			continue
		}
		if l, isLAG := lags[iface]; isLAG {
			return iface, slices.Clone(l.Members)
		}
		return iface, nil
	}
	return "", nil
}
