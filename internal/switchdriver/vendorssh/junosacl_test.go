package vendorssh_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/metalwire/metalwire/internal/switchdriver/sshcli"
	"github.com/metalwire/metalwire/internal/switchdriver/vendorssh"
	"github.com/metalwire/metalwire/internal/switchtest/vendortest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// aclCovered says whether an end-to-end test covers networkOS os's access lists: the lists of
// TestACLEndToEnd, Junos' filters (TestJunosACLEndToEnd) or NX-OS' ingress lists
// (TestNXOSACLEndToEnd).
func aclCovered(os string) bool {
	return slices.Contains(aclOSes, os) || os == "junos" || os == "nxos" || os == "cumulus" || os == "sonic"
}

// junosHostFilters are hostACL's two filters as the switch keeps them: its statements after
// "filter NAME", in order.
var junosHostFilters = map[string][]string{
	"-in": {
		"term r1 from destination-port 22", "term r1 from ip-protocol tcp", "term r1 then discard",
		"term r1-v6 from ip-version ipv6 next-header tcp", "term r1-v6 from ip-version ipv6 destination-port 22", "term r1-v6 then discard",
		"term r3-v6 from ip-version ipv6 ip6-destination-address 2001:db8::/32", "term r3-v6 then accept",
		"term default then discard",
	},
	"-out": {
		"term r2 from destination-port 1000-2000", "term r2 from ip-source-address 10.0.0.0/8", "term r2 from ip-protocol tcp", "term r2 then accept",
		"term r4 from ip-protocol icmp", "term r4 then accept",
		"term r4-v6 from ip-version ipv6 next-header icmp6", "term r4-v6 then accept",
		"term default then discard",
	},
}

// bindings are the filter bindings of a port of the switch.
func bindings(srv *vendortest.Server, port string) []string {
	p, _ := srv.Config.Port(port)
	return slices.Sorted(slices.Values(p.AccessGroups))
}

// A host's access list on Junos end to end: two ethernet-switching filters (NAME-in, NAME-out),
// one term per rule and family and the default, bound input and output on the host's port in
// the batch's one commit; read back as asked, so a second pass sends nothing; a term added by
// hand and a condition added to a term by hand are rewritten; a refused line and a failed commit
// check change nothing on the switch; a port's VLAN change keeps its list bound; a bond's list
// binds to its ae and stays bound when the bond changes; the hosts leaving unbind and remove
// every filter.
func TestJunosACLEndToEnd(t *testing.T) {
	t.Parallel()
	v := vendors()["junos"]
	extra := lagExtra["junos"]
	srv := vendortest.Start(t, "junos", v.ports[0], v.ports[1], v.ports[2], extra[0], extra[1])
	acl := hostACL(v.ports[0])
	want := fabric.State{VLANs: []fabric.VLAN{{ID: 1001}, {ID: 1002}}, ACLs: map[string]fabric.ACL{acl.Name: acl},
		Ports: map[string]fabric.Port{v.ports[0]: {Name: v.ports[0], Mode: fabric.ModeAccess, VLAN: 1001}}}

	// A line the switch refuses: the candidate is rolled back, nothing is committed.
	srv.FailOn("term r3-v6 then accept")
	_, err := aclPass(t, v.set, srv, want, fabric.Record{})
	var cmdErr *sshcli.CommandError
	if !errors.As(err, &cmdErr) || !strings.Contains(cmdErr.Command, "term r3-v6 then accept") {
		t.Fatalf("refused line: %v, want a CommandError naming it", err)
	}
	t.Logf("as a user sees it: %v", err)
	if got := srv.Commands(); !slices.Contains(got, "rollback 0") || slices.Contains(got, "commit") {
		t.Errorf("after the refused line the driver sent %q, want a rollback and no commit", got)
	}
	if names := srv.Config.ACLNames(); len(names) != 0 || len(srv.Config.VLANs()) != 1 {
		t.Fatalf("a refused batch changed the switch: filters %v, VLANs %v", names, srv.Config.VLANs())
	}

	if _, err := aclPass(t, v.set, srv, want, fabric.Record{}); err != nil {
		t.Fatalf("first pass: %v", err)
	}
	golden(t, "junos/ensure-acl.golden", srv.Commands())
	for suffix, wantTerms := range junosHostFilters {
		if got := entries(srv, acl.Name+suffix); !slices.Equal(got, wantTerms) {
			t.Errorf("filter %s%s:\n%q\nwant\n%q", acl.Name, suffix, got, wantTerms)
		}
	}
	wantBind := []string{"filter input " + acl.Name + "-in", "filter output " + acl.Name + "-out"}
	if got := bindings(srv, v.ports[0]); !slices.Equal(got, wantBind) {
		t.Errorf("port %s binds %q, want %q", v.ports[0], got, wantBind)
	}

	have, err := aclPass(t, v.set, srv, want, fabric.RecordOf(want))
	if err != nil {
		t.Fatalf("second pass: %v", err)
	}
	if got := srv.Commands(); len(got) != 0 {
		t.Fatalf("second pass sent %q, want nothing", got)
	}
	if !fabric.SameACL(acl, have.ACLs[acl.Name]) {
		t.Errorf("list reads back %+v, want %+v", have.ACLs[acl.Name], acl)
	}

	// Hand edits: a term added at the end, a condition added to a term. Each pass rewrites the
	// filters as they should be.
	for _, edit := range []string{"term r9 then accept", "term r4 from ip-protocol udp"} {
		srv.Config.SetACLEntry(acl.Name+"-out", 1000, edit)
		if _, err := aclPass(t, v.set, srv, want, fabric.RecordOf(want)); err != nil {
			t.Fatalf("pass after the hand edit %q: %v", edit, err)
		}
		if got := entries(srv, acl.Name+"-out"); !slices.Equal(got, junosHostFilters["-out"]) {
			t.Errorf("filter -out after the pass that repairs %q:\n%q\nwant\n%q", edit, got, junosHostFilters["-out"])
		}
		srv.Commands()
	}

	// A rule changes, but the commit check fails: the switch keeps the list as it was.
	changed := acl
	changed.Rules = changed.Rules[1:]
	changed.DefaultDeny = false
	want.ACLs[acl.Name] = changed
	srv.FailOn("commit check")
	if _, err := aclPass(t, v.set, srv, want, fabric.RecordOf(want)); !errors.As(err, &cmdErr) || cmdErr.Command != "commit check" {
		t.Fatalf("failed commit check: %v, want a CommandError naming it", err)
	}
	srv.Commands()
	if got := entries(srv, acl.Name+"-in"); !slices.Equal(got, junosHostFilters["-in"]) {
		t.Errorf("a failed commit check changed filter -in:\n%q", got)
	}

	// The same change committed.
	if _, err := aclPass(t, v.set, srv, want, fabric.RecordOf(want)); err != nil {
		t.Fatalf("changing the list: %v", err)
	}
	golden(t, "junos/change-acl.golden", srv.Commands())
	if got := entries(srv, acl.Name+"-in"); slices.Contains(got, "term r1 then discard") || got[len(got)-1] != "term default then accept" {
		t.Errorf("filter -in after the change: %q", got)
	}
	if have, _ = aclPass(t, v.set, srv, want, fabric.RecordOf(want)); !fabric.SameACL(changed, have.ACLs[acl.Name]) || len(srv.Commands()) != 0 {
		t.Errorf("changed list reads back %+v, want %+v and nothing sent", have.ACLs[acl.Name], changed)
	}

	// The port moves to another VLAN, its list unchanged: the list stays bound.
	want.Ports[v.ports[0]] = fabric.Port{Name: v.ports[0], Mode: fabric.ModeAccess, VLAN: 1002}
	if _, err := aclPass(t, v.set, srv, want, fabric.RecordOf(want)); err != nil {
		t.Fatalf("moving the port: %v", err)
	}
	if got := srv.Commands(); slices.ContainsFunc(got, func(l string) bool { return strings.Contains(l, "filter") }) {
		t.Errorf("moving the port sent %q, want no filter line", got)
	}
	if got := bindings(srv, v.ports[0]); !slices.Equal(got, wantBind) {
		t.Errorf("after the VLAN change port %s binds %q, want %q", v.ports[0], got, wantBind)
	}

	// A bond's list binds to the bond's ae, in the batch that makes the bond, and stays bound
	// when the bond changes.
	lag, bonded, have := bondListPass(t, v.set, srv, want, changed, []string{extra[0], extra[1]}, hostACL)
	ae := have.LAGs[lag.Name].Port.Name
	bondList := fabric.ACLName("host-b", "control")
	bondBind := []string{"filter input " + bondList + "-in", "filter output " + bondList + "-out"}
	if got := bindings(srv, ae); ae == "" || !slices.Equal(got, bondBind) {
		t.Errorf("bond interface %q binds %q, want %q", ae, got, bondBind)
	}
	lag.Port.VLAN = 1002
	bonded.LAGs[lag.Name] = lag
	if _, err := aclPass(t, v.set, srv, bonded, fabric.RecordOf(bonded)); err != nil {
		t.Fatalf("changing the bond: %v", err)
	}
	srv.Commands()
	if got := bindings(srv, ae); !slices.Equal(got, bondBind) {
		t.Errorf("after the bond's change %s binds %q, want %q", ae, got, bondBind)
	}

	// The hosts leave: every filter unbound and removed.
	if _, err := aclPass(t, v.set, srv, fabric.State{}, fabric.RecordOf(bonded)); err != nil {
		t.Fatalf("leaving: %v", err)
	}
	golden(t, "junos/remove-acl.golden", srv.Commands())
	if left := srv.Config.ACLNames(); len(left) != 0 {
		t.Errorf("filters left on the switch: %v", left)
	}
	for _, n := range srv.Config.PortNames() {
		if got := bindings(srv, n); len(got) != 0 {
			t.Errorf("interface %s still binds %q", n, got)
		}
	}
}

// The emulated switch checks what it commits: a filter bound but not defined fails the commit
// check with Junos' words, and the batch with it, so the driver's filters and bindings are
// proven to be ones the switch takes together.
func TestJunosFilterCheckedAtCommit(t *testing.T) {
	t.Parallel()
	srv := vendortest.Start(t, "junos", "ge-0/0/0")
	batch := fabric.Batch{{Op: fabric.OpEnsureACL, ACL: hostACL("ge-0/0/0")}}
	bad := vendorssh.Junos()
	render := bad.Render
	bad.Render = func(ep fabric.Endpoint, have fabric.State, b fabric.Batch) ([]string, error) {
		lines, err := render(ep, have, b)
		// The bindings alone: the filters they name are never defined.
		return slices.DeleteFunc(lines, func(l string) bool { return strings.Contains(l, "firewall") }), err
	}
	err := applyErr(bad, srv, batch)
	var cmdErr *sshcli.CommandError
	if !errors.As(err, &cmdErr) || !strings.Contains(cmdErr.Output, "is not defined") {
		t.Fatalf("binding an undefined filter: %v, want the commit check's refusal", err)
	}
	t.Logf("as a user sees it: %v", err)
	if got := bindings(srv, "ge-0/0/0"); len(got) != 0 {
		t.Errorf("a refused commit left bindings %q", got)
	}
	if err := applyErr(vendorssh.Junos(), srv, batch); err != nil {
		t.Fatalf("the driver's own batch: %v", err)
	}
}
