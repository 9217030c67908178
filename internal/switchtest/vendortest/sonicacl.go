package vendortest

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// SONiC's access lists live in CONFIG_DB's ACL_TABLE and ACL_RULE tables, kept here as rows
// (key: field values, a list field such as a table's "ports" as a []string).
//
// "sonic-cfggen -a 'JSON' --write-to-db" writes as swsscommon's ConfigDBPipeConnector.mod_config
// does, in one MULTI/EXEC transaction: a table given as null or {} loses every row, a row given
// as null or {} is deleted, any other row's fields are added to what the row had (a field is
// never removed). A JSON that does not parse is a Python traceback and exit status 1, changing
// nothing.
//
// On a switch, sonic-cfggen writes whatever it is given and orchagent then refuses (in syslog)
// the rows the ASIC cannot take. The emulator refuses those rows at once, with an "Error:"
// line and exit status 1 and nothing written, so that a driver that writes one fails its test:
// an ACL_TABLE row needs type L3 or L3V6, stage ingress or egress and ports that exist; an
// ACL_RULE row needs its table, a PRIORITY, PACKET_ACTION FORWARD or DROP, and only matches its
// table's type has (SRC_IP/DST_IP in L3, SRC_IPV6/DST_IPV6 in L3V6), each well formed.

// sonicDBTables are the CONFIG_DB tables the emulator keeps as rows.
var sonicDBTables = []string{"ACL_TABLE", "ACL_RULE"}

// sonicWrite runs "sonic-cfggen -a 'JSON' --write-to-db" (f without sudo).
func sonicWrite(cfg *Config, f []string) (string, int) {
	raw := strings.Trim(strings.Join(f[2:len(f)-1], " "), "'")
	var data map[string]map[string]map[string]any
	if err := json.Unmarshal([]byte(raw), &data); err != nil {
		return "Traceback (most recent call last):\n  File \"/usr/local/bin/sonic-cfggen\", line 454, in <module>\n    main()\n" +
			"json.decoder.JSONDecodeError: " + err.Error() + "\n", 1
	}
	cfg.mu.Lock()
	defer cfg.mu.Unlock()
	next := map[string]map[string]map[string]any{}
	for _, t := range sonicDBTables {
		next[t] = map[string]map[string]any{}
		for k, row := range cfg.db[t] {
			next[t][k] = maps.Clone(row)
		}
	}
	for table, rows := range data {
		if !slices.Contains(sonicDBTables, table) {
			return fmt.Sprintf("Error: table %s: the emulator keeps %s only\n", table, strings.Join(sonicDBTables, ", ")), 1
		}
		if len(rows) == 0 {
			next[table] = map[string]map[string]any{}
			continue
		}
		for key, fields := range rows {
			if len(fields) == 0 {
				delete(next[table], key)
				continue
			}
			row := next[table][key]
			if row == nil {
				row = map[string]any{}
			}
			for k, v := range fields {
				switch v := v.(type) {
				case []any:
					list := make([]string, 0, len(v))
					for _, x := range v {
						list = append(list, fmt.Sprint(x))
					}
					row[k] = list
				case float64:
					row[k] = strconv.FormatFloat(v, 'f', -1, 64)
				default:
					row[k] = fmt.Sprint(v)
				}
			}
			next[table][key] = row
		}
	}
	if msg := sonicCheckACLs(cfg, next); msg != "" {
		return "Error: " + msg + "\n", 1
	}
	cfg.db = next
	return "", 0
}

// sonicCheckACLs is what orchagent would refuse of the ACL rows db holds, or "".
func sonicCheckACLs(cfg *Config, db map[string]map[string]map[string]any) string {
	for _, name := range slices.Sorted(maps.Keys(db["ACL_TABLE"])) {
		t := db["ACL_TABLE"][name]
		typ, _ := t["type"].(string)
		stage, _ := t["stage"].(string)
		ports, _ := t["ports"].([]string)
		switch {
		case typ != "L3" && typ != "L3V6":
			return fmt.Sprintf("ACL_TABLE|%s: type %q: the emulator takes L3 and L3V6 tables", name, typ)
		case !strings.EqualFold(stage, "ingress") && !strings.EqualFold(stage, "egress"):
			return fmt.Sprintf("ACL_TABLE|%s: stage %q: use ingress or egress", name, stage)
		}
		for _, p := range ports {
			if _, ok := cfg.ports[p]; !ok {
				return fmt.Sprintf("ACL_TABLE|%s: port %s does not exist", name, p)
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(db["ACL_RULE"])) {
		table, _, _ := strings.Cut(key, "|")
		t, ok := db["ACL_TABLE"][table]
		if !ok {
			return fmt.Sprintf("ACL_RULE|%s: ACL table %s does not exist", key, table)
		}
		if msg := sonicCheckRule(t["type"] == "L3V6", db["ACL_RULE"][key]); msg != "" {
			return fmt.Sprintf("ACL_RULE|%s: %s", key, msg)
		}
	}
	return ""
}

// sonicCheckRule is what orchagent refuses of one rule of an L3 (or, v6, L3V6) table, or "".
func sonicCheckRule(v6 bool, row map[string]any) string {
	get := func(k string) string { s, _ := row[k].(string); return s }
	if p, err := strconv.Atoi(get("PRIORITY")); err != nil || p < 0 {
		return fmt.Sprintf("PRIORITY %q is not a number", get("PRIORITY"))
	}
	if a := get("PACKET_ACTION"); a != "FORWARD" && a != "DROP" {
		return fmt.Sprintf("PACKET_ACTION %q: use FORWARD or DROP", a)
	}
	for k := range row {
		switch k {
		case "PRIORITY", "PACKET_ACTION":
		case "IP_TYPE":
			if !slices.Contains([]string{"ANY", "IP", "NON_IP", "IPV4ANY", "NON_IPV4", "IPV6ANY", "NON_IPV6", "ARP"}, get(k)) {
				return fmt.Sprintf("IP_TYPE %q is not an IP type", get(k))
			}
		case "IP_PROTOCOL":
			if n, err := strconv.Atoi(get(k)); err != nil || n < 0 || n > 255 {
				return fmt.Sprintf("IP_PROTOCOL %q is not 0-255", get(k))
			}
		case "L4_DST_PORT":
			if n, err := strconv.Atoi(get(k)); err != nil || n < 0 || n > 65535 {
				return fmt.Sprintf("L4_DST_PORT %q is not 0-65535", get(k))
			}
		case "L4_DST_PORT_RANGE":
			lo, hi, _ := strings.Cut(get(k), "-")
			a, errA := strconv.Atoi(lo)
			b, errB := strconv.Atoi(hi)
			if errA != nil || errB != nil || a < 0 || b > 65535 || a > b {
				return fmt.Sprintf("L4_DST_PORT_RANGE %q is not N-M", get(k))
			}
		case "SRC_IP", "DST_IP", "SRC_IPV6", "DST_IPV6":
			p, err := netip.ParsePrefix(get(k))
			if err != nil || p.Addr().Is6() != strings.HasSuffix(k, "V6") {
				return fmt.Sprintf("%s %q is not a prefix of its family", k, get(k))
			}
			if strings.HasSuffix(k, "V6") != v6 {
				return fmt.Sprintf("match %s is not supported by the table's type", k)
			}
		default:
			return fmt.Sprintf("match %s is not one the emulator takes", k)
		}
	}
	return ""
}

// sonicDBTable is sonic-cfggen's --var-json view of a kept table (empty when it has no row:
// sonicTable then prints nothing, as sonic-cfggen does for a table CONFIG_DB lacks).
func sonicDBTable(cfg *Config, table string) map[string]any {
	cfg.mu.Lock()
	defer cfg.mu.Unlock()
	out := map[string]any{}
	for k, row := range cfg.db[table] {
		out[k] = maps.Clone(row)
	}
	return out
}

// SONiCRows returns a copy of a kept CONFIG_DB table's rows (ACL_TABLE, ACL_RULE).
func (c *Config) SONiCRows(table string) map[string]map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]map[string]any{}
	for k, row := range c.db[table] {
		out[k] = maps.Clone(row)
	}
	return out
}

// SetSONiCRow writes a CONFIG_DB row by hand, as an operator would with sonic-db-cli outside
// metalwire (nil fields: the row is deleted).
func (c *Config) SetSONiCRow(table, key string, fields map[string]any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.db == nil {
		c.db = map[string]map[string]map[string]any{}
	}
	if c.db[table] == nil {
		c.db[table] = map[string]map[string]any{}
	}
	if fields == nil {
		delete(c.db[table], key)
		return
	}
	c.db[table][key] = maps.Clone(fields)
}
