package vendorssh_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/metalwire/metalwire/internal/switchdriver/sshcli"
	"github.com/metalwire/metalwire/internal/switchdriver/vendorssh"
	"github.com/metalwire/metalwire/internal/switchtest/vendortest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

var update = flag.Bool("update", false, "rewrite the golden files from what the drivers send")

// vendor is one OS under test: its command set and three of its front-panel ports.
type vendor struct {
	set   sshcli.CommandSet
	ports [3]string
	// failLine is a line of the batch to refuse; dropLine one to drop the connection at.
	failLine, dropLine string
	// untaggedIsAccess: a trunk's native VLAN is its access VLAN, outside the allowed list (OS10).
	untaggedIsAccess bool
	// atomic: a batch with a refused line changes nothing (Junos' commit, NVUE's revision).
	atomic bool
	// noNative is the access VLAN of a trunk without a native VLAN (untaggedIsAccess).
	noNative int
}

func vendors() map[string]vendor {
	return map[string]vendor{
		"eos":  {set: vendorssh.EOS(), ports: [3]string{"Ethernet1", "Ethernet2", "Ethernet3"}, failLine: "switchport access vlan 1001", dropLine: "interface Ethernet2"},
		"nxos": {set: vendorssh.NXOS(), ports: [3]string{"Ethernet1/1", "Ethernet1/2", "Ethernet1/3"}, failLine: "switchport access vlan 1001", dropLine: "interface Ethernet1/2"},
		"dellos10": {set: vendorssh.DellOS10(), ports: [3]string{"ethernet1/1/1", "ethernet1/1/2", "ethernet1/1/3"},
			failLine: "switchport access vlan 1001", dropLine: "interface ethernet1/1/2", untaggedIsAccess: true, noNative: 1},
		"junos": {set: vendorssh.Junos(), ports: [3]string{"ge-0/0/0", "ge-0/0/1", "ge-0/0/2"},
			failLine: "commit check", dropLine: "set interfaces ge-0/0/1 unit 0 family ethernet-switching interface-mode trunk", atomic: true},
		"sonic": {set: vendorssh.SONiC(), ports: [3]string{"Ethernet0", "Ethernet4", "Ethernet8"},
			failLine: "sudo config vlan member add -u 1001 Ethernet0", dropLine: "sudo config vlan member add 1001 Ethernet4", untaggedIsAccess: true},
		"cumulus": {set: vendorssh.Cumulus(), ports: [3]string{"swp1", "swp2", "swp3"},
			failLine: "nv set interface swp1 bridge domain br_default access 1001", dropLine: "nv set interface swp2 bridge domain br_default vlan 1001,1002", atomic: true},
	}
}

func endpoint(srv *vendortest.Server) fabric.Endpoint {
	return fabric.Endpoint{Switch: "leaf1", Address: srv.Host, Port: srv.Port, HostKey: srv.HostKey,
		Credentials: fabric.Credentials{Username: srv.User, Password: srv.Password}}
}

// desired: two VLANs, an access port, a trunk, and a trunk with a native VLAN.
func desired(v vendor) fabric.State {
	return fabric.State{
		VLANs: []fabric.VLAN{{ID: 1001}, {ID: 1002}},
		Ports: map[string]fabric.Port{
			v.ports[0]: {Name: v.ports[0], Mode: fabric.ModeAccess, VLAN: 1001},
			v.ports[1]: {Name: v.ports[1], Mode: fabric.ModeTrunk, Trunk: []int{1001, 1002}},
			v.ports[2]: {Name: v.ports[2], Mode: fabric.ModeTrunk, VLAN: 1001, Trunk: []int{1002}},
		},
	}
}

// pass is one reconcile as the fabric controller runs it: one login, read back, diff, apply.
func pass(t *testing.T, set sshcli.CommandSet, srv *vendortest.Server, want fabric.State, rec fabric.Record) error {
	t.Helper()
	ctx := context.Background()
	sess, err := sshcli.Driver{Set: set, CommandTimeout: 10 * time.Second}.Connect(ctx, endpoint(srv))
	if err != nil {
		return err
	}
	defer func() { _ = sess.Close() }()
	names := slices.Sorted(func(yield func(string) bool) {
		seen := map[string]bool{}
		for n := range want.Ports {
			seen[n] = true
		}
		for _, n := range rec.Ports {
			seen[n] = true
		}
		for n := range seen {
			if !yield(n) {
				return
			}
		}
	})
	have, err := sess.Read(ctx, names)
	if err != nil {
		return err
	}
	return sess.Apply(ctx, fabric.Diff(want, have, rec, 1))
}

// checkSwitch compares the switch's running configuration with want (and idle for the others).
func checkSwitch(t *testing.T, v vendor, srv *vendortest.Server, want fabric.State, others []string) {
	t.Helper()
	vlans := srv.Config.VLANs()
	for _, v := range want.VLANs {
		if !slices.Contains(vlans, v.ID) {
			t.Errorf("VLAN %d missing on the switch (VLANs %v)", v.ID, vlans)
		}
	}
	for name, p := range want.Ports {
		got, ok := srv.Config.Port(name)
		if !ok {
			t.Fatalf("port %s gone", name)
		}
		if got.Mode != string(p.Mode) {
			t.Errorf("port %s mode %s, want %s", name, got.Mode, p.Mode)
			continue
		}
		switch p.Mode {
		case fabric.ModeAccess:
			if got.Access != p.VLAN {
				t.Errorf("port %s access VLAN %d, want %d", name, got.Access, p.VLAN)
			}
		case fabric.ModeTrunk:
			wantAllowed := slices.Clone(p.Trunk)
			if v.untaggedIsAccess {
				if untagged := max(p.VLAN, v.noNative); got.Access != untagged {
					t.Errorf("port %s untagged (access) VLAN %d, want %d", name, got.Access, untagged)
				}
			} else if p.VLAN > 0 {
				wantAllowed = append(wantAllowed, p.VLAN)
				slices.Sort(wantAllowed)
				if got.Native != p.VLAN {
					t.Errorf("port %s native VLAN %d, want %d", name, got.Native, p.VLAN)
				}
			}
			if !slices.Equal(got.Allowed, wantAllowed) {
				t.Errorf("port %s allowed VLANs %v, want %v", name, got.Allowed, wantAllowed)
			}
		}
	}
	for _, name := range others {
		got, _ := srv.Config.Port(name)
		if got.Mode != "access" || got.Access != 1 {
			t.Errorf("port %s is %s %d, want back in idle VLAN 1", name, got.Mode, got.Access)
		}
	}
}

func snapshot(srv *vendortest.Server) string {
	out := fmt.Sprint(srv.Config.VLANs())
	for _, n := range srv.Config.PortNames() {
		p, _ := srv.Config.Port(n)
		out += fmt.Sprintf(" %s:%+v", n, p)
	}
	return out
}

func golden(t *testing.T, file string, lines []string) {
	t.Helper()
	path := filepath.Join("testdata", file)
	got := strings.Join(lines, "\n") + "\n"
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("commands sent differ from %s:\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// Every OS end to end against its emulated switch: hosts' ports and VLANs end as asked; a
// second pass logs in, reads and sends nothing; leaving puts ports back in the idle VLAN and
// removes the VLANs; a refused line fails the batch with the switch's own message; a connection
// dropped half-way is repaired by the next pass.
func TestVendorsEndToEnd(t *testing.T) {
	for name, v := range vendors() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := vendortest.Start(t, name, v.ports[0], v.ports[1], v.ports[2], "spare")
			want := desired(v)

			if err := pass(t, v.set, srv, want, fabric.Record{}); err != nil {
				t.Fatalf("first pass: %v", err)
			}
			checkSwitch(t, v, srv, want, nil)
			golden(t, name+"/apply.golden", srv.Commands())

			logins := srv.Logins()
			if err := pass(t, v.set, srv, want, fabric.RecordOf(want)); err != nil {
				t.Fatalf("second pass: %v", err)
			}
			if got := srv.Commands(); len(got) != 0 || srv.Logins() != logins+1 {
				t.Fatalf("second pass sent %q in %d logins, want nothing in one", got, srv.Logins()-logins)
			}

			if err := pass(t, v.set, srv, fabric.State{}, fabric.RecordOf(want)); err != nil {
				t.Fatalf("leaving: %v", err)
			}
			checkSwitch(t, v, srv, fabric.State{}, v.ports[:])
			if vl := srv.Config.VLANs(); !slices.Equal(vl, []int{1}) {
				t.Errorf("VLANs after leaving %v, want [1]", vl)
			}
			golden(t, name+"/leave.golden", srv.Commands())

			before := snapshot(srv)
			srv.FailOn(v.failLine)
			err := pass(t, v.set, srv, want, fabric.Record{})
			var cmdErr *sshcli.CommandError
			if !errors.As(err, &cmdErr) || cmdErr.Command != v.failLine {
				t.Fatalf("refused line: %v, want a CommandError naming %q", err, v.failLine)
			}
			t.Logf("as a user sees it: %v", err)
			if after := snapshot(srv); v.atomic && after != before {
				t.Errorf("a refused batch changed the switch:\nbefore %s\nafter  %s", before, after)
			}
			if err := pass(t, v.set, srv, want, fabric.Record{}); err != nil {
				t.Fatalf("pass after the refusal: %v", err)
			}
			checkSwitch(t, v, srv, want, nil)

			if err := pass(t, v.set, srv, fabric.State{}, fabric.RecordOf(want)); err != nil {
				t.Fatalf("leaving: %v", err)
			}
			srv.DropOn(v.dropLine)
			if err := pass(t, v.set, srv, want, fabric.Record{}); err == nil {
				t.Fatal("a connection dropped half-way: no error")
			} else {
				t.Logf("dropped: %v", err)
			}
			if err := pass(t, v.set, srv, want, fabric.Record{}); err != nil {
				t.Fatalf("pass after the drop: %v", err)
			}
			checkSwitch(t, v, srv, want, nil)
		})
	}
}

// The exact commands each operation sends, one golden file per OS and operation, plus ports
// that get the same configuration (EOS names them in one range) and a mixed batch (VLAN added,
// ports changed, one reset, a VLAN removed): each applied through the driver to an emulated
// switch set up first, and the lines the switch received compared.
func TestCommandsPerOperation(t *testing.T) {
	for name, v := range vendors() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p0, p1, p2 := v.ports[0], v.ports[1], v.ports[2]
			setup := fabric.Batch{
				{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1001}},
				{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1002}},
				{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1004}},
				{Op: fabric.OpTrunkPort, Port: fabric.Port{Name: p1, Mode: fabric.ModeTrunk, Trunk: []int{1001, 1002}}},
			}
			cases := []struct {
				op    string
				batch fabric.Batch
			}{
				{"ensure-vlan", fabric.Batch{{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1003}}}},
				{"remove-vlan", fabric.Batch{{Op: fabric.OpRemoveVLAN, VLAN: fabric.VLAN{ID: 1004}}}},
				{"access-port", fabric.Batch{{Op: fabric.OpAccessPort, Port: fabric.Port{Name: p0, Mode: fabric.ModeAccess, VLAN: 1001}}}},
				{"trunk-port", fabric.Batch{{Op: fabric.OpTrunkPort, Port: fabric.Port{Name: p0, Mode: fabric.ModeTrunk, Trunk: []int{1001, 1002}}}}},
				{"trunk-port-native", fabric.Batch{{Op: fabric.OpTrunkPort, Port: fabric.Port{Name: p0, Mode: fabric.ModeTrunk, VLAN: 1001, Trunk: []int{1002}}}}},
				{"reset-port", fabric.Batch{{Op: fabric.OpResetPort, Port: fabric.Port{Name: p1, Mode: fabric.ModeAccess, VLAN: 1}}}},
				{"access-ports", fabric.Batch{
					{Op: fabric.OpAccessPort, Port: fabric.Port{Name: p0, Mode: fabric.ModeAccess, VLAN: 1001}},
					{Op: fabric.OpAccessPort, Port: fabric.Port{Name: p2, Mode: fabric.ModeAccess, VLAN: 1002}},
					{Op: fabric.OpAccessPort, Port: fabric.Port{Name: p1, Mode: fabric.ModeAccess, VLAN: 1001}},
				}},
				{"mixed", fabric.Batch{
					{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1003}},
					{Op: fabric.OpAccessPort, Port: fabric.Port{Name: p0, Mode: fabric.ModeAccess, VLAN: 1003}},
					{Op: fabric.OpTrunkPort, Port: fabric.Port{Name: p2, Mode: fabric.ModeTrunk, VLAN: 1003, Trunk: []int{1001}}},
					{Op: fabric.OpResetPort, Port: fabric.Port{Name: p1, Mode: fabric.ModeAccess, VLAN: 1}},
					{Op: fabric.OpRemoveVLAN, VLAN: fabric.VLAN{ID: 1002}},
				}},
			}
			for _, c := range cases {
				srv := vendortest.Start(t, name, p0, p1, p2)
				apply(t, v.set, srv, setup)
				srv.Commands()
				apply(t, v.set, srv, c.batch)
				golden(t, name+"/"+c.op+".golden", srv.Commands())
			}
		})
	}
}

func apply(t *testing.T, set sshcli.CommandSet, srv *vendortest.Server, b fabric.Batch) {
	t.Helper()
	ctx := context.Background()
	sess, err := sshcli.Driver{Set: set, CommandTimeout: 10 * time.Second}.Connect(ctx, endpoint(srv))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sess.Close() }()
	if err := sess.Apply(ctx, b); err != nil {
		t.Fatalf("apply %v: %v", b, err)
	}
}
