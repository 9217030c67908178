package vendorssh_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/metalwire/metalwire/internal/switchdriver/sshcli"
	"github.com/metalwire/metalwire/internal/switchdriver/vendorssh"
	"github.com/metalwire/metalwire/internal/switchtest/vendortest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// refusedEntry is an entry of hostACL's inbound list the switch is made to refuse.
const refusedEntry = "deny tcp " + anyAny + " eq 22"

// anyAny is an entry's source and destination when both are any.
const anyAny = "any " + "any"

// aclOSes bind access lists; the others refuse them and are listed in fabric.OSesWithoutACLs.
var aclOSes = []string{"eos", "dellos10"}

// aclShown is what each OS shows of hostACL's lists: the IPv4 inbound and IPv6 outbound lists'
// entries in sequence order, and the entry of its ssh rule.
var aclShown = map[string]struct {
	in, out6 []string
	ssh      string
}{
	"eos": {
		in: []string{"remark metalwire macs 52:54:00:00:00:0a", "remark metalwire rule 1 deny ssh", "deny tcp " + anyAny + " eq ssh",
			"remark metalwire default deny", "deny ip " + anyAny},
		out6: []string{"remark metalwire rule 4 allow icmp", "permit icmpv6 " + anyAny, "remark metalwire default deny", "deny ipv6 " + anyAny},
		ssh:  "deny tcp " + anyAny + " eq ssh",
	},
	// No remarks: rule I is entry 10*I, the default 50.
	"dellos10": {
		in:   []string{"deny tcp " + anyAny + " eq 22", "deny ip " + anyAny},
		out6: []string{"permit icmp " + anyAny, "deny ipv6 " + anyAny},
		ssh:  "deny tcp " + anyAny + " eq 22",
	},
}

// aclPass is one reconcile as the fabric controller runs it, ACLs included: read what the
// fabric names (ports, bonds, lists), diff, apply; it returns what was read.
// bondListPass makes host-b's bond of members, with its list (list gives it for a port) beside
// changed, the list the switch keeps for the host already there, checks that a second pass sends
// nothing and that the bond's list reads back as asked, and returns the bond, the state asked and
// what the second pass read.
func bondListPass(t *testing.T, set sshcli.CommandSet, srv *vendortest.Server, want fabric.State, changed fabric.ACL, members []string,
	list func(port string) fabric.ACL) (fabric.LAG, fabric.State, fabric.State) {
	t.Helper()
	lag := fabric.LAG{Name: fabric.LAGName("host-b", "control"), Members: members, LACP: true,
		Port: fabric.Port{Name: fabric.LAGName("host-b", "control"), Mode: fabric.ModeAccess, VLAN: 1001}}
	bondACL := list(lag.Name)
	bondACL.Name, bondACL.Members = fabric.ACLName("host-b", "control"), lag.Members
	bonded := fabric.State{VLANs: want.VLANs, Ports: want.Ports, LAGs: map[string]fabric.LAG{lag.Name: lag},
		ACLs: map[string]fabric.ACL{changed.Name: changed, bondACL.Name: bondACL}}
	if _, err := aclPass(t, set, srv, bonded, fabric.RecordOf(want)); err != nil {
		t.Fatalf("bond and its list: %v", err)
	}
	srv.Commands()
	have, err := aclPass(t, set, srv, bonded, fabric.RecordOf(bonded))
	if err != nil || len(srv.Commands()) != 0 {
		t.Fatalf("second pass with the bond: %v, or commands sent", err)
	}
	if got := have.ACLs[bondACL.Name]; !fabric.SameACL(bondACL, got) {
		t.Errorf("bond's list reads back %+v, want %+v", got, bondACL)
	}
	return lag, bonded, have
}

func aclPass(t *testing.T, set sshcli.CommandSet, srv *vendortest.Server, want fabric.State, rec fabric.Record) (fabric.State, error) {
	t.Helper()
	ctx := context.Background()
	sess, err := sshcli.Driver{Set: set, CommandTimeout: 10 * time.Second}.Connect(ctx, endpoint(srv))
	if err != nil {
		return fabric.State{}, err
	}
	defer func() { _ = sess.Close() }()
	names := slices.Concat(rec.Ports, rec.LAGs, rec.ACLs, slices.Collect(maps.Keys(want.Ports)),
		slices.Collect(maps.Keys(want.LAGs)), slices.Collect(maps.Keys(want.ACLs)))
	have, err := sess.Read(ctx, slices.Compact(slices.Sorted(slices.Values(names))))
	if err != nil {
		return fabric.State{}, err
	}
	return have, sess.Apply(ctx, fabric.Diff(want, have, rec, 1))
}

// hostACL: ssh denied into the switch, a TCP range from 10.0.0.0/8 allowed to the host, all
// IPv6 to 2001:db8::/32 allowed; everything else denied.
func hostACL(port string) fabric.ACL {
	return fabric.ACL{Name: fabric.ACLName("host-a", "control"), Port: port, HostMACs: []string{"52:54:00:00:00:0A"},
		Rules: []fabric.ACLRule{
			{Direction: fabric.DirectionIngress, Protocol: "ssh", Action: fabric.ActionDeny},
			{Direction: fabric.DirectionEgress, Protocol: "tcp:1000-2000", Action: fabric.ActionAllow, Remote: "10.0.0.0/8"},
			{Direction: fabric.DirectionIngress, Protocol: "all", Action: fabric.ActionAllow, Remote: "2001:db8::/32"},
			{Direction: fabric.DirectionEgress, Protocol: "icmp", Action: fabric.ActionAllow},
		},
		DefaultDeny: true}
}

// entries are a list's entries on the switch, in sequence order.
func entries(srv *vendortest.Server, list string) []string {
	a, ok := srv.Config.ACL(list)
	if !ok {
		return nil
	}
	var out []string
	for _, seq := range slices.Sorted(maps.Keys(a.Entries)) {
		out = append(out, a.Entries[seq])
	}
	return out
}

// A host's access list end to end on each OS that binds them: its four lists (IPv4 and IPv6,
// in and out) hold the rules in order and the default, bound to the host's port; read back as
// asked, so a second pass sends nothing; an entry added by hand and a changed rule rewrite the
// lists; a list on a bond binds to the bond's port-channel; a refused entry fails the batch with
// the switch's words; the host leaving unbinds and removes every list.
func TestACLEndToEnd(t *testing.T) {
	for _, name := range aclOSes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			v := vendors()[name]
			extra := lagExtra[name]
			srv := vendortest.Start(t, name, v.ports[0], v.ports[1], v.ports[2], extra[0], extra[1])
			acl := hostACL(v.ports[0])
			want := fabric.State{VLANs: []fabric.VLAN{{ID: 1001}}, ACLs: map[string]fabric.ACL{acl.Name: acl},
				Ports: map[string]fabric.Port{v.ports[0]: {Name: v.ports[0], Mode: fabric.ModeAccess, VLAN: 1001}}}

			srv.FailOn(refusedEntry)
			_, err := aclPass(t, v.set, srv, want, fabric.Record{})
			var cmdErr *sshcli.CommandError
			if !errors.As(err, &cmdErr) || !strings.Contains(cmdErr.Command, refusedEntry) {
				t.Fatalf("refused entry: %v, want a CommandError naming it", err)
			}
			t.Logf("as a user sees it: %v", err)

			if _, err := aclPass(t, v.set, srv, want, fabric.Record{}); err != nil {
				t.Fatalf("first pass: %v", err)
			}
			srv.Commands()
			// Rewritten whole from the half-done state: the same lines as from nothing.
			srv2 := vendortest.Start(t, name, v.ports[0], v.ports[1], v.ports[2])
			if _, err := aclPass(t, v.set, srv2, want, fabric.Record{}); err != nil {
				t.Fatalf("first pass on a fresh switch: %v", err)
			}
			golden(t, name+"/ensure-acl.golden", srv2.Commands())

			wantIn, wantOut6 := aclShown[name].in, aclShown[name].out6
			if got := entries(srv, acl.Name+"-in"); !slices.Equal(got, wantIn) {
				t.Errorf("IPv4 inbound list:\n%q\nwant\n%q", got, wantIn)
			}
			if got := entries(srv, acl.Name+"-out6"); !slices.Equal(got, wantOut6) {
				t.Errorf("IPv6 outbound list:\n%q\nwant\n%q", got, wantOut6)
			}
			if p, _ := srv.Config.Port(v.ports[0]); len(p.AccessGroups) != 4 {
				t.Errorf("port %s binds %q, want the four lists", v.ports[0], p.AccessGroups)
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

			// An entry added by hand: the next pass rewrites the lists as they should be.
			srv.Config.SetACLEntry(acl.Name+"-in", 35, "permit ip "+anyAny)
			if _, err := aclPass(t, v.set, srv, want, fabric.RecordOf(want)); err != nil {
				t.Fatalf("pass after the hand edit: %v", err)
			}
			if got := entries(srv, acl.Name+"-in"); !slices.Equal(got, wantIn) {
				t.Errorf("IPv4 inbound list after the pass that repairs a hand edit:\n%q\nwant\n%q", got, wantIn)
			}
			srv.Commands()

			// A rule changes: the lists are rewritten.
			changed := acl
			changed.Rules = changed.Rules[1:]
			changed.DefaultDeny = false
			want.ACLs[acl.Name] = changed
			if _, err := aclPass(t, v.set, srv, want, fabric.RecordOf(want)); err != nil {
				t.Fatalf("changing the list: %v", err)
			}
			golden(t, name+"/change-acl.golden", srv.Commands())
			if got := entries(srv, acl.Name+"-in"); slices.Contains(got, aclShown[name].ssh) || got[len(got)-1] != "permit ip "+anyAny {
				t.Errorf("IPv4 inbound list after the change: %q", got)
			}
			if have, _ = aclPass(t, v.set, srv, want, fabric.RecordOf(want)); !fabric.SameACL(changed, have.ACLs[acl.Name]) || len(srv.Commands()) != 0 {
				t.Errorf("changed list reads back %+v, want %+v and nothing sent", have.ACLs[acl.Name], changed)
			}

			// A bond's list binds to the bond's interface, in the batch that makes the bond.
			lag, bonded, have := bondListPass(t, v.set, srv, want, changed, []string{extra[0], extra[1]}, hostACL)
			if pc := have.LAGs[lag.Name].Port.Name; pc == "" {
				t.Error("bond not read back")
			} else if p, _ := srv.Config.Port(pc); len(p.AccessGroups) != 4 {
				t.Errorf("bond interface %s binds %q, want the four lists", pc, p.AccessGroups)
			}

			// The hosts leave: every list unbound and removed.
			if _, err := aclPass(t, v.set, srv, fabric.State{}, fabric.RecordOf(bonded)); err != nil {
				t.Fatalf("leaving: %v", err)
			}
			golden(t, name+"/remove-acl.golden", srv.Commands())
			if left := srv.Config.ACLNames(); len(left) != 0 {
				t.Errorf("lists left on the switch: %v", left)
			}
			for _, n := range srv.Config.PortNames() {
				if p, _ := srv.Config.Port(n); len(p.AccessGroups) != 0 {
					t.Errorf("interface %s still binds %q", n, p.AccessGroups)
				}
			}
		})
	}
}

// A list on a trunk (the network tagged on the port) cannot be scoped to its VLAN by a port's
// list: refused with ErrUnsupported naming the OS, nothing sent. The OSes that bind no list
// refuse every list the same way.
func TestACLRefused(t *testing.T) {
	for name, v := range vendors() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := vendortest.Start(t, name, v.ports[0])
			acl := hostACL(v.ports[0])
			if aclCovered(name) {
				acl.VLAN = 1001
			} else if v.set.ACLs || fabric.OSesWithoutACLs[name] == "" {
				t.Fatalf("networkOS %s binds no list but does not say so", name)
			}
			err := applyErr(v.set, srv, fabric.Batch{{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1001}}, {Op: fabric.OpEnsureACL, ACL: acl}})
			if !errors.Is(err, fabric.ErrUnsupported) || !strings.Contains(err.Error(), "networkOS "+name) {
				t.Fatalf("got %v, want ErrUnsupported naming networkOS %s", err, name)
			}
			t.Logf("as a user sees it: %v", err)
			if got := srv.Commands(); len(got) != 0 {
				t.Errorf("sent %q, want nothing", got)
			}
		})
	}
}

// What each driver says it does is what the fabric's lists say, so the controller refuses a
// network up front exactly where a driver would refuse the batch: port state, access lists,
// and access lists on trunks (every OS here refuses those: TestACLRefused).
func TestDriversAgreeWithTheFabricLists(t *testing.T) {
	for _, d := range vendorssh.Drivers() {
		os := d.NetworkOS()
		if got, want := d.SetsPortState(), fabric.OSesWithoutPortState[os] == ""; got != want {
			t.Errorf("networkOS %s sets port state: %v, but fabric.OSesWithoutPortState says %q", os, got, fabric.OSesWithoutPortState[os])
		}
		if got, want := d.SetsACLs(), fabric.OSesWithoutACLs[os] == ""; got != want {
			t.Errorf("networkOS %s binds access lists: %v, but fabric.OSesWithoutACLs says %q", os, got, fabric.OSesWithoutACLs[os])
		}
		if d.SetsACLs() != aclCovered(os) {
			t.Errorf("networkOS %s binds access lists: %v, but the end-to-end test does not cover it", os, d.SetsACLs())
		}
		if d.SetsACLs() && fabric.OSesWithoutTrunkACLs[os] == "" {
			t.Errorf("networkOS %s refuses a trunk's list but is not in fabric.OSesWithoutTrunkACLs", os)
		}
	}
}
