package vendorssh_test

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/metalwire/metalwire/internal/switchdriver/sshcli"
	"github.com/metalwire/metalwire/internal/switchtest/vendortest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// sonicACLPass is one reconcile as the fabric controller runs it on the SONiC switch with the
// tests' port-channel range: read the ports, bonds and lists, diff, apply; it returns what was
// read.
func sonicACLPass(t *testing.T, srv *vendortest.Server, want fabric.State, rec fabric.Record) (fabric.State, error) {
	t.Helper()
	sess := sonicSession(t, srv, &sonicRange)
	ctx := context.Background()
	names := slices.Concat(rec.Ports, rec.LAGs, rec.ACLs, slices.Collect(maps.Keys(want.Ports)),
		slices.Collect(maps.Keys(want.LAGs)), slices.Collect(maps.Keys(want.ACLs)))
	have, err := sess.Read(ctx, slices.Compact(slices.Sorted(slices.Values(names))))
	if err != nil {
		return fabric.State{}, err
	}
	return have, sess.Apply(ctx, fabric.Diff(want, have, rec, 1))
}

// sonicSettled brings the switch to want in one pass, then checks that a second pass, with the
// record of the first, sends nothing; it returns what the second pass read.
func sonicSettled(t *testing.T, srv *vendortest.Server, want fabric.State) fabric.State {
	t.Helper()
	if _, err := sonicACLPass(t, srv, want, fabric.Record{}); err != nil {
		t.Fatalf("first pass: %v", err)
	}
	srv.Commands()
	have, err := sonicACLPass(t, srv, want, fabric.RecordOf(want))
	if err != nil {
		t.Fatalf("second pass: %v", err)
	}
	if sent := srv.Commands(); len(sent) != 0 {
		t.Fatalf("second pass sent %q, want nothing", sent)
	}
	return have
}

// portWithList is hostACL on port, the port an access port of VLAN 1001: the list and the state
// that wants it.
func portWithList(port string) (fabric.ACL, fabric.State) {
	acl := hostACL(port)
	return acl, fabric.State{VLANs: []fabric.VLAN{{ID: 1001}}, ACLs: map[string]fabric.ACL{acl.Name: acl},
		Ports: map[string]fabric.Port{port: {Name: port, Mode: fabric.ModeAccess, VLAN: 1001}}}
}

// row is a CONFIG_DB row as the emulator keeps it.
type row = map[string]any

// sonicHostRows are some of hostACL's ACL_RULE rows (rules 1-4: ssh denied in, tcp 1000-2000
// from 10.0.0.0/8 allowed out, all IPv6 to 2001:db8::/32 allowed in, icmp allowed out; the
// default deny) as CONFIG_DB keeps them.
func sonicHostRows(name string) map[string]row {
	return map[string]row{
		name + "-in|RULE_1":    {"PRIORITY": "9999", "PACKET_ACTION": "DROP", "IP_TYPE": "IPV4ANY", "IP_PROTOCOL": "6", "L4_DST_PORT": "22"},
		name + "-in6|RULE_1":   {"PRIORITY": "9999", "PACKET_ACTION": "DROP", "IP_TYPE": "IPV6ANY", "IP_PROTOCOL": "6", "L4_DST_PORT": "22"},
		name + "-out|RULE_2":   {"PRIORITY": "9998", "PACKET_ACTION": "FORWARD", "IP_TYPE": "IPV4ANY", "IP_PROTOCOL": "6", "L4_DST_PORT_RANGE": "1000-2000", "SRC_IP": "10.0.0.0/8"},
		name + "-in6|RULE_3":   {"PRIORITY": "9997", "PACKET_ACTION": "FORWARD", "IP_TYPE": "IPV6ANY", "DST_IPV6": "2001:db8::/32"},
		name + "-out|RULE_4":   {"PRIORITY": "9996", "PACKET_ACTION": "FORWARD", "IP_TYPE": "IPV4ANY", "IP_PROTOCOL": "1"},
		name + "-out6|RULE_4":  {"PRIORITY": "9996", "PACKET_ACTION": "FORWARD", "IP_TYPE": "IPV6ANY", "IP_PROTOCOL": "58"},
		name + "-in|DEFAULT":   {"PRIORITY": "1", "PACKET_ACTION": "DROP", "IP_TYPE": "IPV4ANY"},
		name + "-out6|DEFAULT": {"PRIORITY": "1", "PACKET_ACTION": "DROP", "IP_TYPE": "IPV6ANY"},
	}
}

// sonicTables are the ACL_TABLE rows of a list with all four tables bound to iface.
func sonicTables(name, iface string) map[string]row {
	t := func(typ, stage string) row {
		return row{"type": typ, "stage": stage, "ports": []string{iface}, "policy_desc": "metalwire"}
	}
	return map[string]row{name + "-in": t("L3", "ingress"), name + "-out": t("L3", "egress"),
		name + "-in6": t("L3V6", "ingress"), name + "-out6": t("L3V6", "egress")}
}

// A host's list on SONiC end to end, through CONFIG_DB: four ACL tables (IPv4 and IPv6, ingress
// and egress) bound to the host's port, the rules in order by priority and the default below
// them; read back as asked, so a second pass sends nothing; a hand edit (a rule changed, a rule
// added) is repaired; a changed list is rewritten; a bond and its list made in one batch bind
// the list to the bond's port-channel; an injected error fails the batch with SONiC's words and
// the next pass repairs it; leaving deletes every row; the operator's own ACL table is never
// touched.
func TestSONiCACLEndToEnd(t *testing.T) {
	t.Parallel()
	srv := vendortest.Start(t, "sonic", "Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12", "Ethernet16")
	operators := row{"type": "L3", "stage": "ingress", "ports": []string{"Ethernet8"}, "policy_desc": "DATAACL"}
	srv.Config.SetSONiCRow("ACL_TABLE", "DATAACL", operators)
	srv.Config.SetSONiCRow("ACL_RULE", "DATAACL|RULE_1", row{"PRIORITY": "9999", "PACKET_ACTION": "DROP", "IP_PROTOCOL": "17"})
	acl, want := portWithList("Ethernet0")

	srv.FailOn("sonic-cfggen -a")
	_, err := sonicACLPass(t, srv, want, fabric.Record{})
	var cmdErr *sshcli.CommandError
	if !errors.As(err, &cmdErr) || !strings.Contains(cmdErr.Command, "--write-to-db") || !strings.Contains(err.Error(), "Connection refused") {
		t.Fatalf("refused write: %v, want a CommandError naming it with SONiC's words", err)
	}
	t.Logf("as a user sees it: %v", err)
	if got := srv.Config.SONiCRows("ACL_TABLE"); len(got) != 1 {
		t.Fatalf("a failed write left tables: %v", slices.Sorted(maps.Keys(got)))
	}
	if _, err := sonicACLPass(t, srv, want, fabric.Record{}); err != nil {
		t.Fatalf("pass after the refused write: %v", err)
	}
	srv.Commands()
	fresh := vendortest.Start(t, "sonic", "Ethernet0", "Ethernet4", "Ethernet8")
	if _, err := sonicACLPass(t, fresh, want, fabric.Record{}); err != nil {
		t.Fatalf("first pass on a fresh switch: %v", err)
	}
	golden(t, "sonic/ensure-acl.golden", fresh.Commands())
	tables, rules := srv.Config.SONiCRows("ACL_TABLE"), srv.Config.SONiCRows("ACL_RULE")
	for k, v := range sonicTables(acl.Name, "Ethernet0") {
		if !reflect.DeepEqual(tables[k], v) {
			t.Errorf("ACL_TABLE|%s = %v, want %v", k, tables[k], v)
		}
	}
	for k, v := range sonicHostRows(acl.Name) {
		if !reflect.DeepEqual(rules[k], v) {
			t.Errorf("ACL_RULE|%s = %v, want %v", k, rules[k], v)
		}
	}
	for _, absent := range []string{acl.Name + "-in|RULE_3", acl.Name + "-out6|RULE_2", acl.Name + "-in|RULE_2"} {
		if r, ok := rules[absent]; ok {
			t.Errorf("ACL_RULE|%s = %v, want no such row (another family or direction)", absent, r)
		}
	}

	have, err := sonicACLPass(t, srv, want, fabric.RecordOf(want))
	if err != nil {
		t.Fatalf("second pass: %v", err)
	}
	if got := srv.Commands(); len(got) != 0 {
		t.Fatalf("second pass sent %q, want nothing", got)
	}
	if !fabric.SameACL(acl, have.ACLs[acl.Name]) {
		t.Errorf("list reads back %+v, want %+v", have.ACLs[acl.Name], acl)
	}

	srv.Config.SetSONiCRow("ACL_RULE", acl.Name+"-in|RULE_1", row{"PRIORITY": "9999", "PACKET_ACTION": "FORWARD", "IP_TYPE": "IPV4ANY", "IP_PROTOCOL": "6", "L4_DST_PORT": "22"})
	srv.Config.SetSONiCRow("ACL_RULE", acl.Name+"-in|BYHAND", row{"PRIORITY": "9999", "PACKET_ACTION": "FORWARD", "IP_TYPE": "IPV4ANY"})
	if _, err := sonicACLPass(t, srv, want, fabric.RecordOf(want)); err != nil {
		t.Fatalf("pass after the hand edit: %v", err)
	}
	if got := srv.Config.SONiCRows("ACL_RULE"); !reflect.DeepEqual(got, rules) {
		t.Errorf("rules after the pass that repairs a hand edit:\n%v\nwant\n%v", got, rules)
	}
	srv.Commands()

	// A rewrite whose deleting line went through and whose writing line failed leaves the
	// list's tables bound with no rule; the next pass reads that as a different list and
	// writes it again.
	srv.Config.SetSONiCRow("ACL_RULE", acl.Name+"-in|RULE_1", row{"PRIORITY": "9999", "PACKET_ACTION": "FORWARD", "IP_TYPE": "IPV4ANY"})
	srv.FailOn(`sonic-cfggen -a '{"ACL_TABLE"`)
	if _, err := sonicACLPass(t, srv, want, fabric.RecordOf(want)); err == nil {
		t.Fatal("the pass whose writing line was refused did not fail")
	}
	for k := range srv.Config.SONiCRows("ACL_RULE") {
		if strings.HasPrefix(k, acl.Name) {
			t.Errorf("rule %s left after the deleting line", k)
		}
	}
	if got := srv.Config.SONiCRows("ACL_TABLE"); len(got) != 5 {
		t.Errorf("tables after the deleting line: %v, want the list's four still bound and DATAACL", slices.Sorted(maps.Keys(got)))
	}
	srv.Commands()
	if _, err := sonicACLPass(t, srv, want, fabric.RecordOf(want)); err != nil {
		t.Fatalf("pass after the failed rewrite: %v", err)
	}
	if got := srv.Config.SONiCRows("ACL_RULE"); !reflect.DeepEqual(got, rules) {
		t.Errorf("rules after the pass that follows a failed rewrite:\n%v\nwant\n%v", got, rules)
	}
	// The tables it found stay and it found no rule: nothing to delete, so no deleting line.
	if cmds := srv.Commands(); len(cmds) != 2 || !strings.HasPrefix(cmds[0], `sudo sonic-cfggen -a '{"ACL_TABLE"`) {
		t.Errorf("the pass after the failed rewrite sent %q, want the writing line and the save", cmds)
	}

	changed := acl
	changed.Rules = changed.Rules[:len(changed.Rules)-1]
	changed.DefaultDeny = false
	want.ACLs[acl.Name] = changed
	if _, err := sonicACLPass(t, srv, want, fabric.RecordOf(want)); err != nil {
		t.Fatalf("changing the list: %v", err)
	}
	golden(t, "sonic/change-acl.golden", srv.Commands())
	if have, _ = sonicACLPass(t, srv, want, fabric.RecordOf(want)); !fabric.SameACL(changed, have.ACLs[acl.Name]) || len(srv.Commands()) != 0 {
		t.Errorf("changed list reads back %+v, want %+v and nothing sent", have.ACLs[acl.Name], changed)
	}
	if _, ok := srv.Config.SONiCRows("ACL_TABLE")[acl.Name+"-out6"]; ok {
		t.Errorf("table -out6 kept with no rule and the default allow")
	}

	// A bond and its list in one batch, beside the port's list changing back.
	lag := fabric.LAG{Name: fabric.LAGName("host-b", "control"), Members: []string{"Ethernet12", "Ethernet16"}, LACP: true,
		Port: fabric.Port{Name: fabric.LAGName("host-b", "control"), Mode: fabric.ModeAccess, VLAN: 1001}}
	bondACL := ingressACL(lag.Name)
	bondACL.Name, bondACL.Members = fabric.ACLName("host-b", "control"), lag.Members
	bonded := fabric.State{VLANs: want.VLANs, Ports: want.Ports, LAGs: map[string]fabric.LAG{lag.Name: lag},
		ACLs: map[string]fabric.ACL{acl.Name: acl, bondACL.Name: bondACL}}
	if _, err := sonicACLPass(t, srv, bonded, fabric.RecordOf(want)); err != nil {
		t.Fatalf("bond and its list: %v", err)
	}
	golden(t, "sonic/mixed-acl.golden", srv.Commands())
	if got := srv.Config.SONiCRows("ACL_TABLE")[bondACL.Name+"-in"]["ports"]; !reflect.DeepEqual(got, []string{channelOf(lag.Name)}) {
		t.Errorf("the bond's list binds %v, want its port-channel %s", got, channelOf(lag.Name))
	}
	have, err = sonicACLPass(t, srv, bonded, fabric.RecordOf(bonded))
	if err != nil || len(srv.Commands()) != 0 {
		t.Fatalf("second pass with the bond: %v, or commands sent", err)
	}
	if got := have.ACLs[bondACL.Name]; !fabric.SameACL(bondACL, got) {
		t.Errorf("bond's list reads back %+v, want %+v", got, bondACL)
	}

	if _, err := sonicACLPass(t, srv, fabric.State{}, fabric.RecordOf(bonded)); err != nil {
		t.Fatalf("leaving: %v", err)
	}
	golden(t, "sonic/remove-acl.golden", srv.Commands())
	if got := srv.Config.SONiCRows("ACL_TABLE"); !reflect.DeepEqual(got, map[string]row{"DATAACL": operators}) {
		t.Errorf("tables after leaving: %v, want the operator's DATAACL only", got)
	}
	if got := srv.Config.SONiCRows("ACL_RULE"); len(got) != 1 || got["DATAACL|RULE_1"] == nil {
		t.Errorf("rules after leaving: %v, want the operator's DATAACL|RULE_1 only", got)
	}
}

// The emulated SONiC writes "sonic-cfggen -a JSON --write-to-db" as sonic-cfggen does (a null
// row deleted, fields added to a row) and refuses, changing nothing, a JSON that does not parse
// (sonic-cfggen's traceback) and the rows orchagent would refuse (a rule of an L3V6 table
// matching SRC_IP, a rule without its table, a table on a port the switch lacks).
func TestSONiCACLWriteChecked(t *testing.T) {
	t.Parallel()
	srv := vendortest.Start(t, "sonic", "Ethernet0")
	for _, c := range []struct{ cmd, want string }{
		{`sudo sonic-cfggen -a '{"ACL_TABLE":{"t":{"type":"L3V6","stage":"ingress","ports":["Ethernet0"]}},"ACL_RULE":{"t|r":{"PRIORITY":"1","PACKET_ACTION":"DROP","SRC_IP":"10.0.0.0/8"}}}' --write-to-db`,
			"ACL_RULE|t|r: match SRC_IP is not supported by the table's type"},
		{`sudo sonic-cfggen -a '{"ACL_RULE":{"u|r":{"PRIORITY":"1","PACKET_ACTION":"DROP"}}}' --write-to-db`, "ACL table u does not exist"},
		{`sudo sonic-cfggen -a '{"ACL_TABLE":{"t":{"type":"L3","stage":"ingress","ports":["Ethernet9"]}}}' --write-to-db`, "port Ethernet9 does not exist"},
		{`sudo sonic-cfggen -a '{"ACL_TABLE":{' --write-to-db`, "json.decoder.JSONDecodeError"},
		{`sudo sonic-cfggen -a '{"ACL_TABLE":{"t":{"type":"L3","stage":"ingress","ports":["Ethernet0"]}},"ACL_RULE":{"t|r":{"PRIORITY":"1","PACKET_ACTION":"DROP","L4_DST_PORT":"22"}}}' --write-to-db`, ""},
		{`sudo sonic-cfggen -a '{"ACL_RULE":{"t|r":{"IP_PROTOCOL":"6"}}}' --write-to-db`, ""},
	} {
		out, ok := nvExec(t, srv, c.cmd)
		if ok != (c.want == "") || !strings.Contains(out, c.want) {
			t.Errorf("%s: %q (ok %v), want %q", c.cmd, out, ok, c.want)
		}
	}
	// Fields add to what the row had.
	if got := srv.Config.SONiCRows("ACL_RULE")["t|r"]; !reflect.DeepEqual(got, row{"PRIORITY": "1", "PACKET_ACTION": "DROP", "L4_DST_PORT": "22", "IP_PROTOCOL": "6"}) {
		t.Errorf("rule after two writes: %v", got)
	}
	if out, ok := nvExec(t, srv, `sudo sonic-cfggen -a '{"ACL_RULE":{"t|r":null},"ACL_TABLE":{"t":null}}' --write-to-db`); !ok {
		t.Fatalf("deleting: %s", out)
	}
	if len(srv.Config.SONiCRows("ACL_TABLE"))+len(srv.Config.SONiCRows("ACL_RULE")) != 0 {
		t.Errorf("rows left after the nulls: %v %v", srv.Config.SONiCRows("ACL_TABLE"), srv.Config.SONiCRows("ACL_RULE"))
	}
}

// A list's name is never read as a bond, even when the port-channel it would number in the
// range is a bond's: the bond's list still reads back bound to its bond, and a second pass
// sends nothing.
func TestSONiCACLNameIsNoBond(t *testing.T) {
	t.Parallel()
	srv := vendortest.Start(t, "sonic", "Ethernet0", "Ethernet4")
	lag := fabric.LAG{Name: fabric.LAGName("host-b", "control"), Members: []string{"Ethernet0", "Ethernet4"}, LACP: true,
		Port: fabric.Port{Name: fabric.LAGName("host-b", "control"), Mode: fabric.ModeAccess, VLAN: 1001}}
	list := ingressACL(lag.Name)
	list.Members = lag.Members
	for i := 0; ; i++ {
		list.Name = fabric.ACLName(strconv.Itoa(i), "control")
		if channelOf(list.Name) == channelOf(lag.Name) {
			break
		}
	}
	want := fabric.State{VLANs: []fabric.VLAN{{ID: 1001}}, LAGs: map[string]fabric.LAG{lag.Name: lag},
		ACLs: map[string]fabric.ACL{list.Name: list}}
	have := sonicSettled(t, srv, want)
	if got := have.ACLs[list.Name]; got.Port != lag.Name {
		t.Errorf("the list reads back bound to %q, want the bond %s", got.Port, lag.Name)
	}
	if _, isBond := have.LAGs[list.Name]; isBond {
		t.Errorf("the list's name %s reads back as a bond", list.Name)
	}
}

// A list whose tables were bound to different ports by hand reads back the same on every pass:
// drifted, on the port of its first table (NAME-in), so what a pass plans for it does not change
// from one read to the next.
func TestSONiCACLSplitTablesReadTheSame(t *testing.T) {
	t.Parallel()
	srv := vendortest.Start(t, "sonic", "Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12")
	acl := hostACL("Ethernet0")
	for name, table := range sonicTables(acl.Name, "Ethernet0") {
		srv.Config.SetSONiCRow("ACL_TABLE", name, table)
	}
	for i, suffix := range []string{"-out", "-in6", "-out6"} {
		table := sonicTables(acl.Name, "")[acl.Name+suffix]
		table["ports"] = []string{"Ethernet" + strconv.Itoa(4*(i+1))}
		srv.Config.SetSONiCRow("ACL_TABLE", acl.Name+suffix, table)
	}
	sess := sonicSession(t, srv, &sonicRange)
	for range 20 {
		have, err := sess.Read(context.Background(), []string{acl.Name})
		if err != nil {
			t.Fatal(err)
		}
		got := have.ACLs[acl.Name]
		if got.Port != "Ethernet0" || len(got.Rules) != 1 || got.Rules[0].Direction != "drifted" {
			t.Fatalf("the split list reads back as %+v, want drifted on Ethernet0 (its -in table's port)", got)
		}
	}
}

// A rule added by hand under a key with a quote in it is deleted by the next pass like any other,
// in a line whose JSON keeps to the single quotes around it (the switch's shell would otherwise
// end the argument there).
func TestSONiCACLQuotedKeyStaysInItsArgument(t *testing.T) {
	t.Parallel()
	srv := vendortest.Start(t, "sonic", "Ethernet0")
	acl, want := portWithList("Ethernet0")
	if _, err := sonicACLPass(t, srv, want, fabric.Record{}); err != nil {
		t.Fatalf("first pass: %v", err)
	}
	handKey := acl.Name + "-in|it's mine"
	srv.Config.SetSONiCRow("ACL_RULE", handKey, row{"PRIORITY": "9999", "PACKET_ACTION": "FORWARD", "IP_TYPE": "IPV4ANY"})
	srv.Commands()
	if _, err := sonicACLPass(t, srv, want, fabric.RecordOf(want)); err != nil {
		t.Fatalf("pass after the hand edit: %v", err)
	}
	for _, cmd := range srv.Commands() {
		if strings.Contains(cmd, "sonic-cfggen -a") && strings.Count(cmd, "'") != 2 {
			t.Errorf("a quote inside the JSON argument: %s", cmd)
		}
	}
	if r, ok := srv.Config.SONiCRows("ACL_RULE")[handKey]; ok {
		t.Errorf("the hand-added rule %q is still there: %v", handKey, r)
	}
}

// An ACL table of the operator's in a shape metalwire does not write (its ports a string, as a
// hand-written row without "@" shows) is not read: the switch's ports and the host's list are
// configured and read back as asked beside it.
func TestSONiCACLOperatorsOddTableIsNotRead(t *testing.T) {
	t.Parallel()
	srv := vendortest.Start(t, "sonic", "Ethernet0", "Ethernet8")
	srv.Config.SetSONiCRow("ACL_TABLE", "HANDMADE", row{"type": "L3", "stage": "ingress", "ports": "Ethernet8"})
	acl, want := portWithList("Ethernet0")
	have := sonicSettled(t, srv, want)
	if !fabric.SameACL(acl, have.ACLs[acl.Name]) || have.Ports["Ethernet0"].VLAN != 1001 {
		t.Errorf("reads back list %+v and port %+v, want the list as asked and VLAN 1001", have.ACLs[acl.Name], have.Ports["Ethernet0"])
	}
}
