package vendorssh

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// Access lists on SONiC, written to CONFIG_DB as SONiC operators do without acl-loader (whose
// "full" update adds its own deny rule to every ingress table): ACL_TABLE rows bind a table to
// ports, ACL_RULE rows hold its rules, and orchagent programs both into the ASIC. A host's list
// is up to four tables, one per direction and address family (aclLists):
//
//	NAME-in   type L3,   stage ingress   NAME-out   type L3,   stage egress
//	NAME-in6  type L3V6, stage ingress   NAME-out6  type L3V6, stage egress
//
// each with "ports" [the host's port, or its bond's port-channel] and policy_desc "metalwire".
// NAME-in is always made (so even an empty list shows where it is bound); the others when they
// have a rule or the default is deny. Rule I of the network (1-based) is row "TABLE|RULE_I" of
// each table it is in (a rule without remote is in both families' tables, one with a remote in
// its family's only), and the default is row "TABLE|DEFAULT":
//
//	PRIORITY       10000-I (a higher priority wins in SONiC, so the network's order holds);
//	               DEFAULT: 1, below every rule
//	PACKET_ACTION  FORWARD (allow) or DROP (deny)
//	IP_TYPE        IPV4ANY in an L3 table, IPV6ANY in an L3V6 table: a port's tables of one
//	               stage are looked up in parallel, so each table matches its own family only
//	               (and ARP and other non-IP frames pass whatever the default, as on the CLI
//	               switches)
//	IP_PROTOCOL    6 (tcp), 17 (udp), 1 (icmp; 58 in an L3V6 table); absent for "all"
//	L4_DST_PORT    N, or L4_DST_PORT_RANGE N-M
//	DST_IP|SRC_IP  the remote of an ingress (destination) or egress (source) rule; DST_IPV6 and
//	               SRC_IPV6 in an L3V6 table
//
// Read back takes every table named NAME-in|-in6|-out|-out6 and every rule of those tables,
// rebuilds the network's rules from the rows and keeps the list only if the rows are exactly
// what the rebuilt list renders (else it reads as drifted and is rewritten). Lists metalwire did
// not name are never read nor touched.

// sonicACLDesc is the policy_desc of every table metalwire writes.
const sonicACLDesc = "metalwire"

// sonicTopPriority is the priority of rule 0 (rule I is sonicTopPriority-I); the default is 1.
const sonicTopPriority = 10000

// sonicTable is an ACL_TABLE row as metalwire writes and reads it.
type sonicTable struct {
	Type   string   `json:"type"`
	Stage  string   `json:"stage"`
	Ports  []string `json:"ports"`
	Policy string   `json:"policy_desc"`
}

// sonicACLRows are a list's rows: its tables by name and its rules by "TABLE|RULE" key.
type sonicACLRows struct {
	tables map[string]sonicTable
	rules  map[string]map[string]string
}

// sonicACLType is the table type of list l.
func sonicACLType(l aclList) string {
	if l.v6 {
		return "L3V6"
	}
	return "L3"
}

// sonicRows renders list a (as checkACL passed it) bound to iface.
func sonicRows(a fabric.ACL, iface string) sonicACLRows {
	out := sonicACLRows{tables: map[string]sonicTable{}, rules: map[string]map[string]string{}}
	for _, l := range aclLists {
		table := a.Name + l.suffix
		made := l.suffix == "-in" || a.DefaultDeny
		for n, r := range a.Rules {
			e, in := ruleEntry(r, l)
			if !in {
				continue
			}
			made = true
			out.rules[fmt.Sprintf("%s|RULE_%d", table, n+1)] = sonicRule(e, l, sonicTopPriority-(n+1))
		}
		if !made {
			continue
		}
		out.tables[table] = sonicTable{Type: sonicACLType(l), Stage: l.dir, Ports: []string{iface}, Policy: sonicACLDesc}
		out.rules[table+"|DEFAULT"] = sonicRule(defaultEntry(a, l), l, 1)
	}
	return out
}

// sonicRule is one ACL_RULE row of an entry of list l.
func sonicRule(e aclEntry, l aclList, priority int) map[string]string {
	row := map[string]string{"PRIORITY": strconv.Itoa(priority), "PACKET_ACTION": "FORWARD", "IP_TYPE": "IPV4ANY"}
	if e.action == "deny" {
		row["PACKET_ACTION"] = "DROP"
	}
	src, dst := "SRC_IP", "DST_IP"
	if l.v6 {
		row["IP_TYPE"], src, dst = "IPV6ANY", "SRC_IPV6", "DST_IPV6"
	}
	if e.src != "any" {
		row[src] = e.src
	}
	if e.dst != "any" {
		row[dst] = e.dst
	}
	switch e.proto {
	case "tcp":
		row["IP_PROTOCOL"] = "6"
	case "udp":
		row["IP_PROTOCOL"] = "17"
	case "icmp":
		row["IP_PROTOCOL"] = "1"
	case "icmpv6":
		row["IP_PROTOCOL"] = "58"
	}
	switch {
	case e.first != 0 && e.first == e.last:
		row["L4_DST_PORT"] = strconv.Itoa(int(e.first))
	case e.first != 0:
		row["L4_DST_PORT_RANGE"] = fmt.Sprintf("%d-%d", e.first, e.last)
	}
	return row
}

// sonicACLRule is the model's rule a row of list l renders; ok is false for a row metalwire
// does not write.
func sonicACLRule(row map[string]string, l aclList) (fabric.ACLRule, bool) {
	r := fabric.ACLRule{Direction: l.dir, Action: fabric.ActionAllow, Protocol: "all"}
	if row["PACKET_ACTION"] == "DROP" {
		r.Action = fabric.ActionDeny
	}
	src, dst := "SRC_IP", "DST_IP"
	if l.v6 {
		src, dst = "SRC_IPV6", "DST_IPV6"
	}
	r.Remote = row[dst]
	if l.dir == fabric.DirectionEgress {
		r.Remote = row[src]
	}
	if r.Remote != "" {
		if p, err := netip.ParsePrefix(r.Remote); err != nil || p.Addr().Is6() != l.v6 {
			return r, false
		}
	}
	ports := row["L4_DST_PORT"]
	if rng, ok := row["L4_DST_PORT_RANGE"]; ok {
		ports = rng
	}
	switch row["IP_PROTOCOL"] {
	case "":
	case "1", "58":
		r.Protocol = "icmp"
	case "6":
		r.Protocol = "tcp:" + ports
	case "17":
		r.Protocol = "udp:" + ports
	default:
		return r, false
	}
	if _, err := fabric.ParseProtocol(r.Protocol); err != nil {
		return r, false
	}
	return r, true
}

// sonicACLIface is the CONFIG_DB interface a list binds: its port, or its bond's port-channel.
func sonicACLIface(ep fabric.Endpoint, a fabric.ACL) (string, error) {
	if len(a.Members) == 0 {
		return a.Port, nil
	}
	agg, err := sonicAggregates(ep)
	if err != nil {
		return "", err
	}
	pc, _ := agg.AggregateOf(a.Port)
	return pc, nil
}

// aclWrite gathers a run of consecutive list changes: the rows to delete (CONFIG_DB keys, as
// "ACL_TABLE|T" and "ACL_RULE|T|R") and the rows to write.
type aclWrite struct {
	del  map[string]bool
	rows sonicACLRows
}

// acl adds an ensure-acl or remove-acl change to the run being gathered: the rows the switch
// has of the list (read back: have's Entries) are deleted, and an ensured list's rows written.
func (r *sonicRender) acl(ep fabric.Endpoint, i int, c fabric.Change) error {
	a := c.ACL
	if c.Op == fabric.OpEnsureACL {
		if err := checkACL("sonic", i, c); err != nil {
			return err
		}
		if err := fabric.ACLFits("sonic", a); err != nil {
			return fmt.Errorf("change %d (%s): %w (%w)", i, c, fabric.ErrUnsupported, err)
		}
	}
	if r.aclRun == nil {
		r.aclRun = &aclWrite{del: map[string]bool{}, rows: sonicACLRows{tables: map[string]sonicTable{}, rules: map[string]map[string]string{}}}
	}
	cur := r.have.ACLs[a.Name]
	if c.Op == fabric.OpRemoveACL {
		cur = a
	}
	for _, k := range cur.Entries {
		r.aclRun.del[k] = true
	}
	if c.Op == fabric.OpRemoveACL {
		return nil
	}
	iface, err := sonicACLIface(ep, a)
	if err != nil {
		return fmt.Errorf("change %d (%s): %w", i, c, err)
	}
	rows := sonicRows(a, iface)
	maps.Copy(r.aclRun.rows.tables, rows.tables)
	maps.Copy(r.aclRun.rows.rules, rows.rules)
	return nil
}

// flushACLs writes the gathered run: one sonic-cfggen line deleting the rows the switch had
// (rules, then the tables no longer wanted; a JSON null deletes a row), then one writing the
// new rows (tables before rules). sonic-cfggen's --write-to-db sends each line to CONFIG_DB in
// one Redis transaction (MULTI/EXEC), and adds a row's fields to what the row had rather than
// replacing it, which is why a rewritten list's rules are deleted first. A table that stays is
// rewritten in place, so its binding is never dropped.
func (r *sonicRender) flushACLs() error {
	run := r.aclRun
	r.aclRun = nil
	if run == nil {
		return nil
	}
	rules, tables := map[string]map[string]string{}, map[string]*sonicTable{} // nil: JSON null
	for k := range run.del {
		if key, ok := strings.CutPrefix(k, "ACL_RULE|"); ok {
			rules[key] = nil
		} else if key, ok := strings.CutPrefix(k, "ACL_TABLE|"); ok {
			if _, stays := run.rows.tables[key]; !stays {
				tables[key] = nil
			}
		}
	}
	// Nothing to delete when the switch had only tables that stay (a list whose rules are gone).
	if len(rules)+len(tables) > 0 {
		line, err := sonicCfggenWrite([2]string{"ACL_RULE", "ACL_TABLE"}, [2]any{rules, tables}, [2]int{len(rules), len(tables)})
		if err != nil {
			return err
		}
		r.add(line)
	}
	if len(run.rows.tables) > 0 {
		line, err := sonicCfggenWrite([2]string{"ACL_TABLE", "ACL_RULE"}, [2]any{run.rows.tables, run.rows.rules}, [2]int{len(run.rows.tables), len(run.rows.rules)})
		if err != nil {
			return err
		}
		r.add(line)
	}
	return nil
}

// sonicCfggenWrite is "sudo sonic-cfggen -a '{"A":{...},"B":{...}}' --write-to-db" of two
// tables' rows in that order (n rows each). A table without rows is left out: mod_config takes
// an empty table object as "delete every row of the table", the operator's lists included.
// The JSON stands in single quotes for the switch's shell, and a key read back from the switch
// (a rule added by hand, deleted by a rewrite) may hold one: it is written as JSON's \u0027,
// the same string to sonic-cfggen (a ' can only stand inside a JSON string).
func sonicCfggenWrite(names [2]string, rows [2]any, n [2]int) (string, error) {
	var parts []string
	for i := range names {
		if n[i] == 0 {
			continue
		}
		body, err := json.Marshal(rows[i])
		if err != nil {
			return "", fmt.Errorf("writing %s as JSON: %w", names[i], err)
		}
		parts = append(parts, fmt.Sprintf("%q:%s", names[i], strings.ReplaceAll(string(body), "'", `\u0027`)))
	}
	return "sudo sonic-cfggen -a '{" + strings.Join(parts, ",") + "}' --write-to-db", nil
}

// parseSONiCACLs reads the named host lists from sonic-cfggen's ACL_TABLE and ACL_RULE tables:
// rebuilt from their rows, kept only if the rows are exactly what the rebuilt list renders
// (else one "drifted" rule, so it is rewritten), bound to the port or bond (lags, by the
// port-channel its name numbers) the tables name; Entries are every row found, so a rewrite
// deletes exactly them.
func parseSONiCACLs(ep fabric.Endpoint, names []string, tableOut, ruleOut string, lags map[string]fabric.LAG) (map[string]fabric.ACL, error) {
	// Rows as JSON, each decoded only if it is one of the named lists' tables: a row of the
	// operator's (a control-plane table, or one written by hand in another shape) is not read.
	var tables map[string]json.RawMessage
	if err := sonicJSON(tableOut, &tables); err != nil {
		return nil, fmt.Errorf("sonic-cfggen ACL_TABLE: %w", err)
	}
	var raw map[string]map[string]any
	if err := sonicJSON(ruleOut, &raw); err != nil {
		return nil, fmt.Errorf("sonic-cfggen ACL_RULE: %w", err)
	}
	byChannel := map[string]string{}
	if agg, err := sonicAggregates(ep); err == nil {
		for name := range lags {
			pc, _ := agg.AggregateOf(name)
			byChannel[pc] = name
		}
	}
	out := map[string]fabric.ACL{}
	for _, name := range names {
		shown := sonicACLRows{tables: map[string]sonicTable{}, rules: map[string]map[string]string{}}
		var entries []string
		for _, l := range aclLists {
			raw, ok := tables[name+l.suffix]
			if !ok {
				continue
			}
			var t sonicTable
			if err := json.Unmarshal(raw, &t); err != nil {
				// Not a row metalwire writes: the list reads as drifted below and is rewritten.
				t = sonicTable{Type: "unreadable: " + err.Error()}
			}
			shown.tables[name+l.suffix] = t
			entries = append(entries, "ACL_TABLE|"+name+l.suffix)
		}
		if len(shown.tables) == 0 {
			continue
		}
		for key, fields := range raw {
			table, _, _ := strings.Cut(key, "|")
			if _, ours := shown.tables[table]; !ours {
				continue
			}
			entries = append(entries, "ACL_RULE|"+key)
			row := map[string]string{}
			for f, v := range fields {
				row[f] = fmt.Sprint(v)
			}
			shown.rules[key] = row
		}
		slices.Sort(entries)
		a, iface := sonicACLOf(name, shown)
		a.Port = iface
		if bond, isBond := byChannel[iface]; isBond {
			a.Port, a.Members = bond, slices.Clone(lags[bond].Members)
		}
		if len(a.Rules) == 0 || a.Rules[0].Direction != "drifted" {
			want := sonicRows(a, iface)
			if !maps.EqualFunc(want.tables, shown.tables, sameSONiCTable) || !maps.EqualFunc(want.rules, shown.rules, maps.Equal) {
				a = fabric.ACL{Name: name, Port: a.Port, Members: a.Members, Rules: []fabric.ACLRule{{Direction: "drifted"}}}
			}
		}
		a.Entries = entries
		out[name] = a
	}
	return out, nil
}

func sameSONiCTable(a, b sonicTable) bool {
	return a.Type == b.Type && a.Stage == b.Stage && a.Policy == b.Policy && slices.Equal(a.Ports, b.Ports)
}

// sonicACLOf rebuilds a list from its rows: the rules by number, the default, and the one
// interface its tables are bound to. A list whose rows cannot be the model's reads as drifted.
func sonicACLOf(name string, shown sonicACLRows) (fabric.ACL, string) {
	a := fabric.ACL{Name: name}
	drifted := fabric.ACL{Name: name, Rules: []fabric.ACLRule{{Direction: "drifted"}}}
	// The first table's port in aclLists' order, not the map's: a list whose tables were moved
	// apart reads the same on every pass (its remove-acl says the same port, also in a dry run's
	// planned changes), and the comparison with its rendering finds it drifted.
	iface := ""
	for _, l := range aclLists {
		if t, ok := shown.tables[name+l.suffix]; ok && len(t.Ports) == 1 {
			iface = t.Ports[0]
			break
		}
	}
	book := newRuleBook()
	for key, row := range shown.rules {
		table, rule, _ := strings.Cut(key, "|")
		var list aclList
		for _, l := range aclLists {
			if table == name+l.suffix {
				list = l
			}
		}
		switch n, err := strconv.Atoi(strings.TrimPrefix(rule, "RULE_")); {
		case rule == "DEFAULT":
			book.defaults[row["PACKET_ACTION"]] = true
		case err != nil || n < 1 || !strings.HasPrefix(rule, "RULE_"):
			return drifted, iface
		default:
			r, ok := sonicACLRule(row, list)
			if !ok || !book.add(n, r) {
				return drifted, iface
			}
		}
	}
	if !book.fill(&a, "DROP") {
		return drifted, iface
	}
	return a, iface
}
