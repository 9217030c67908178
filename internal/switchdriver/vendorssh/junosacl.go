package vendorssh

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// Access lists on Junos (ELS: EX, QFX) are firewall filters of family ethernet-switching, two per
// host's list: NAME-in, bound "filter input" (ingress: what the host sends), and NAME-out, bound
// "filter output" (egress: what the switch sends the host), on unit 0 family ethernet-switching
// of the host's port or of its bond's ae interface. One filter holds both address families, so a
// rule is one term per family it applies to, named after the rule's place among the network's
// rules (1-based): rN for IPv4 (or, for "all" without a remote, every frame) and rN-v6 for IPv6;
// the last term, "default", has no match and the default's action. Match conditions, as
// Juniper's configuration schema names them under "firewall family ethernet-switching filter F
// term T from":
//
//	IPv4: ip-protocol (tcp, udp, icmp), destination-port N or N-M, ip-destination-address (ingress
//	      remote) or ip-source-address (egress remote)
//	IPv6: ip-version ipv6 next-header (tcp, udp, icmp6), ip-version ipv6 destination-port,
//	      ip-version ipv6 ip6-destination-address or ip6-source-address
//
// Read back rebuilds the rules from the terms and keeps the list only if rendering them again
// gives exactly the terms the switch shows, so a term added or changed by hand is rewritten.
// Filters are written whole inside the batch's candidate (deleted, then set again): the commit
// makes the change one step, and a refused line or a failed commit check leaves the running
// configuration as it was.

// junosFilterPrefix starts every statement of a host's filters.
const junosFilterPrefix = "firewall family ethernet-switching filter "

// junosFilterDirs are a list's two filters: suffix, the rules' direction, the binding keyword.
var junosFilterDirs = []struct{ suffix, dir, bind string }{
	{"-in", fabric.DirectionIngress, "input"}, {"-out", fabric.DirectionEgress, "output"},
}

// junosTerm is a filter term: its name, its match conditions as statements after "from" (in the
// order the switch shows them), and its action (accept, discard).
type junosTerm struct {
	name string
	from []string
	then string
}

// statements are the term as candidate statements after the filter's name.
func (t junosTerm) statements() []string {
	out := make([]string, 0, len(t.from)+1)
	for _, f := range t.from {
		out = append(out, "term "+t.name+" from "+f)
	}
	return append(out, "term "+t.name+" then "+t.then)
}

func junosAction(action string) string {
	if action == fabric.ActionDeny {
		return "discard"
	}
	return "accept"
}

// junosRuleTerms are rule n's terms (1-based), as checkACL passed the rule.
func junosRuleTerms(n int, r fabric.ACLRule) []junosTerm {
	p, _ := fabric.ParseProtocol(r.Protocol)
	name, then := "r"+strconv.Itoa(n), junosAction(r.Action)
	if p.Name == "all" && r.Remote == "" {
		return []junosTerm{{name: name, then: then}}
	}
	v4, v6 := true, true
	if r.Remote != "" {
		pre, _ := netip.ParsePrefix(r.Remote)
		v4, v6 = pre.Addr().Is4(), pre.Addr().Is6()
	}
	ports := ""
	switch {
	case p.FirstPort != 0 && p.FirstPort == p.LastPort:
		ports = strconv.Itoa(int(p.FirstPort))
	case p.FirstPort != 0:
		ports = fmt.Sprintf("%d-%d", p.FirstPort, p.LastPort)
	}
	addr := "destination-address"
	if r.Direction == fabric.DirectionEgress {
		addr = "source-address"
	}
	var out []junosTerm
	if v4 {
		t := junosTerm{name: name, then: then}
		if ports != "" {
			t.from = append(t.from, "destination-port "+ports)
		}
		if r.Remote != "" {
			t.from = append(t.from, "ip-"+addr+" "+r.Remote)
		}
		if p.Name != "all" {
			t.from = append(t.from, "ip-protocol "+p.Name)
		}
		out = append(out, t)
	}
	if v6 {
		t := junosTerm{name: name + "-v6", then: then}
		switch p.Name {
		case "icmp":
			t.from = append(t.from, "ip-version ipv6 next-header icmp6")
		case "tcp", "udp":
			t.from = append(t.from, "ip-version ipv6 next-header "+p.Name)
		}
		if ports != "" {
			t.from = append(t.from, "ip-version ipv6 destination-port "+ports)
		}
		if r.Remote != "" {
			t.from = append(t.from, "ip-version ipv6 ip6-"+addr+" "+r.Remote)
		}
		out = append(out, t)
	}
	return out
}

// junosFilterTerms are the terms of one of a list's filters (dir: the rules' direction).
func junosFilterTerms(a fabric.ACL, dir string) []junosTerm {
	var out []junosTerm
	for n, r := range a.Rules {
		if r.Direction == dir {
			out = append(out, junosRuleTerms(n+1, r)...)
		}
	}
	def := fabric.ActionAllow
	if a.DefaultDeny {
		def = fabric.ActionDeny
	}
	return append(out, junosTerm{name: "default", then: junosAction(def)})
}

// junosACLIface is the interface a list is bound to: its port, or its bond's ae (as the switch
// shows it, or as a new bond of its members is numbered).
func junosACLIface(have fabric.State, a fabric.ACL) (string, error) {
	if len(a.Members) == 0 {
		return a.Port, nil
	}
	if l, ok := have.LAGs[a.Port]; ok && l.Port.Name != "" {
		return l.Port.Name, nil
	}
	n, err := junosAE(a.Members)
	if err != nil {
		return "", err
	}
	return "ae" + strconv.Itoa(n), nil
}

// renderJunosACL writes an ensure-acl or remove-acl change as candidate statements (ES is "unit
// 0 family ethernet-switching", FF "firewall family ethernet-switching filter"):
//
//	ensure-acl: delete interfaces OLD ES filter input / ... output (a list bound elsewhere) /
//	            delete FF NAME-in / set FF NAME-in term T from COND / set FF NAME-in term T then
//	            accept|discard (each term) / the same for NAME-out /
//	            set interfaces P ES filter input NAME-in / set interfaces P ES filter output NAME-out
//	remove-acl: delete interfaces P ES filter input / ... output / delete FF NAME-in / delete FF NAME-out
func renderJunosACL(have fabric.State, i int, c fabric.Change) ([]string, error) {
	a := c.ACL
	es := func(iface string) string { return "interfaces " + iface + " unit 0 family ethernet-switching filter " }
	var lines []string
	if cur, ok := have.ACLs[a.Name]; ok && cur.Port != "" {
		old, err := junosACLIface(have, cur)
		if err != nil {
			return nil, fmt.Errorf("change %d (%s): %w", i, c, err)
		}
		iface := ""
		if c.Op == fabric.OpEnsureACL {
			if iface, err = junosACLIface(have, a); err != nil {
				return nil, fmt.Errorf("change %d (%s): %w", i, c, err)
			}
		}
		if old != iface {
			lines = append(lines, "delete "+es(old)+"input", "delete "+es(old)+"output")
		}
	}
	if c.Op == fabric.OpRemoveACL {
		for _, d := range junosFilterDirs {
			lines = append(lines, "delete "+junosFilterPrefix+a.Name+d.suffix)
		}
		return lines, nil
	}
	if err := checkACL("junos", i, c); err != nil {
		return nil, err
	}
	iface, err := junosACLIface(have, a)
	if err != nil {
		return nil, fmt.Errorf("change %d (%s): %w", i, c, err)
	}
	for _, d := range junosFilterDirs {
		filter := junosFilterPrefix + a.Name + d.suffix
		lines = append(lines, "delete "+filter)
		for _, t := range junosFilterTerms(a, d.dir) {
			for _, s := range t.statements() {
				lines = append(lines, "set "+filter+" "+s)
			}
		}
	}
	for _, d := range junosFilterDirs {
		lines = append(lines, "set "+es(iface)+d.bind+" "+a.Name+d.suffix)
	}
	return lines, nil
}

// junosFiltersJSON is "show configuration firewall family ethernet-switching | display json".
type junosFiltersJSON struct {
	Configuration struct {
		Firewall struct {
			Family struct {
				ES struct {
					Filter []struct {
						Name string          `json:"name"`
						Term []junosTermJSON `json:"term"`
					} `json:"filter"`
				} `json:"ethernet-switching"`
			} `json:"family"`
		} `json:"firewall"`
	} `json:"configuration"`
}

// junosNamed is a list entry of the configuration keyed by name (an address).
type junosNamed struct {
	Name string `json:"name"`
}

type junosTermJSON struct {
	Name string `json:"name"`
	From struct {
		DestinationPort []string     `json:"destination-port"`
		IPSource        []junosNamed `json:"ip-source-address"`
		IPDestination   []junosNamed `json:"ip-destination-address"`
		IPProtocol      []string     `json:"ip-protocol"`
		IPVersion       struct {
			IPv6 struct {
				NextHeader      []string     `json:"next-header"`
				DestinationPort []string     `json:"destination-port"`
				IP6Source       []junosNamed `json:"ip6-source-address"`
				IP6Destination  []junosNamed `json:"ip6-destination-address"`
			} `json:"ipv6"`
		} `json:"ip-version"`
	} `json:"from"`
	Then map[string]json.RawMessage `json:"then"`
}

// term reads a term as junosTerm, its conditions in the order junosRuleTerms writes them; ok is
// false for a term with an action other than one accept or discard.
func (t junosTermJSON) term() (junosTerm, bool) {
	out := junosTerm{name: t.Name}
	add := func(prefix string, vals []string) {
		for _, v := range vals {
			out.from = append(out.from, prefix+v)
		}
	}
	names := func(l []junosNamed) []string {
		s := make([]string, len(l))
		for i, n := range l {
			s[i] = n.Name
		}
		return s
	}
	f := t.From
	add("destination-port ", f.DestinationPort)
	add("ip-source-address ", names(f.IPSource))
	add("ip-destination-address ", names(f.IPDestination))
	add("ip-protocol ", f.IPProtocol)
	v6 := f.IPVersion.IPv6
	add("ip-version ipv6 next-header ", v6.NextHeader)
	add("ip-version ipv6 destination-port ", v6.DestinationPort)
	add("ip-version ipv6 ip6-source-address ", names(v6.IP6Source))
	add("ip-version ipv6 ip6-destination-address ", names(v6.IP6Destination))
	if len(t.Then) != 1 {
		return out, false
	}
	for k := range t.Then {
		out.then = k
	}
	return out, out.then == "accept" || out.then == "discard"
}

// junosTermRule is the rule a term renders (rN, rN-v6) and its number; ok is false for a term
// metalwire does not write.
func junosTermRule(dir string, t junosTerm) (int, fabric.ACLRule, bool) {
	num, _ := strings.CutSuffix(strings.TrimPrefix(t.name, "r"), "-v6")
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 || !strings.HasPrefix(t.name, "r") {
		return 0, fabric.ACLRule{}, false
	}
	r := fabric.ACLRule{Direction: dir, Action: fabric.ActionAllow, Protocol: "all"}
	if t.then == "discard" {
		r.Action = fabric.ActionDeny
	}
	proto, ports := "", ""
	for _, f := range t.from {
		w := strings.Fields(strings.TrimPrefix(f, "ip-version ipv6 "))
		if len(w) != 2 {
			return 0, r, false
		}
		switch w[0] {
		case "ip-protocol", "next-header":
			proto = w[1]
		case "destination-port":
			ports = w[1]
		default:
			r.Remote = w[1]
		}
	}
	switch {
	case proto == "icmp6" || proto == "icmp":
		r.Protocol = "icmp"
	case proto != "" && ports != "":
		r.Protocol = proto + ":" + ports
	case proto != "":
		return 0, r, false // metalwire writes tcp and udp with a port only
	}
	return n, r, true
}

// junosACLs reads the named lists from the filters (name: terms) and the interfaces' bindings
// (interface: "input NAME", "output NAME"): rebuilt from the terms and kept only if rendering them
// again gives the same terms; bound to the interface whose input and output are the list's
// filters (a port, or the ae of a bond in lags).
func junosACLs(names []string, filters map[string][]junosTerm, binds map[string][]string, lags map[string]fabric.LAG) map[string]fabric.ACL {
	out := map[string]fabric.ACL{}
	for _, name := range names {
		_, hasIn := filters[name+"-in"]
		_, hasOut := filters[name+"-out"]
		if !hasIn && !hasOut {
			continue
		}
		a, ok := junosACLOfFilters(name, filters)
		if !ok {
			// Not as metalwire wrote it: a list that differs from every wanted one, so the next
			// change rewrites it.
			out[name] = fabric.ACL{Name: name, Rules: []fabric.ACLRule{{Direction: "drifted"}}}
			continue
		}
		for iface, b := range binds {
			if !slices.Contains(b, "input "+name+"-in") || !slices.Contains(b, "output "+name+"-out") {
				continue
			}
			a.Port = iface
			for _, l := range lags {
				if l.Port.Name == iface {
					a.Port, a.Members = l.Name, slices.Clone(l.Members)
				}
			}
		}
		out[name] = a
	}
	return out
}

// junosACLOfFilters rebuilds a list from its two filters; ok is false when they do not hold what
// metalwire writes.
func junosACLOfFilters(name string, filters map[string][]junosTerm) (fabric.ACL, bool) {
	a := fabric.ACL{Name: name}
	book := newRuleBook()
	for _, d := range junosFilterDirs {
		terms, ok := filters[name+d.suffix]
		if !ok {
			return a, false
		}
		for _, t := range terms {
			if t.name == "default" {
				book.defaults[t.then] = true
				continue
			}
			n, r, ok := junosTermRule(d.dir, t)
			if !ok {
				return a, false
			}
			// The IPv4 and IPv6 terms of a rule without a remote read as the same rule; of one
			// with a remote, only one term exists.
			if !book.add(n, r) {
				return a, false
			}
		}
	}
	if !book.fill(&a, "discard") {
		return a, false
	}
	for _, d := range junosFilterDirs {
		var want, got []string
		for _, t := range junosFilterTerms(a, d.dir) {
			want = append(want, t.statements()...)
		}
		for _, t := range filters[name+d.suffix] {
			got = append(got, t.statements()...)
		}
		if !slices.Equal(want, got) {
			return a, false
		}
	}
	return a, true
}

// parseJunosFilters reads "show configuration firewall family ethernet-switching | display json":
// each filter's terms, in order. A term with a condition or action metalwire never writes reads
// as a term "?" that matches no rule.
func parseJunosFilters(out string) (map[string][]junosTerm, error) {
	filters := map[string][]junosTerm{}
	if strings.TrimSpace(out) == "" {
		return filters, nil
	}
	var fw junosFiltersJSON
	if err := json.Unmarshal([]byte(out), &fw); err != nil {
		return nil, fmt.Errorf("show configuration firewall family ethernet-switching | display json: %w", err)
	}
	var raw struct {
		Configuration struct {
			Firewall struct {
				Family struct {
					ES struct {
						Filter []struct {
							Term []struct {
								From map[string]json.RawMessage `json:"from"`
							} `json:"term"`
						} `json:"filter"`
					} `json:"ethernet-switching"`
				} `json:"family"`
			} `json:"firewall"`
		} `json:"configuration"`
	}
	_ = json.Unmarshal([]byte(out), &raw)
	for fi, f := range fw.Configuration.Firewall.Family.ES.Filter {
		terms := make([]junosTerm, 0, len(f.Term))
		for ti, tj := range f.Term {
			t, ok := tj.term()
			if !ok || !junosOwnConditions(raw.Configuration.Firewall.Family.ES.Filter[fi].Term[ti].From) {
				t.name = "?"
			}
			terms = append(terms, t)
		}
		filters[f.Name] = terms
	}
	return filters, nil
}

// junosOwnConditions says whether a term's "from" holds only conditions metalwire writes (a
// condition added by hand, which junosTermJSON does not read, makes the term another's).
func junosOwnConditions(from map[string]json.RawMessage) bool {
	known := map[string]bool{"destination-port": true, "ip-source-address": true, "ip-destination-address": true, "ip-protocol": true}
	for k, v := range from {
		if k != "ip-version" {
			if !known[k] {
				return false
			}
			continue
		}
		var versions map[string]map[string]json.RawMessage
		if json.Unmarshal(v, &versions) != nil {
			return false
		}
		for ver, conds := range versions {
			if ver != "ipv6" {
				return false
			}
			for c := range conds {
				if c != "next-header" && c != "destination-port" && c != "ip6-source-address" && c != "ip6-destination-address" {
					return false
				}
			}
		}
	}
	return true
}
