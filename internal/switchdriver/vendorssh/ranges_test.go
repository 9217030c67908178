package vendorssh_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/metalwire/metalwire/internal/switchdriver/sshcli"
	"github.com/metalwire/metalwire/internal/switchdriver/vendorssh"
	"github.com/metalwire/metalwire/internal/switchtest/vendortest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// EOS and NX-OS configure the ports of a batch that get the same lines together, consecutive
// ports as one range, and consecutive VLANs as one range: the switch receives those lines, ends
// as asked (read back through the driver), a second pass sends nothing, and a refused line under
// a range fails the batch with the switch's message.
func TestIOSRanges(t *testing.T) {
	for _, tc := range []struct {
		os, prefix string
		set        sshcli.CommandSet
	}{{"eos", "Ethernet", vendorssh.EOS()}, {"nxos", "Ethernet1/", vendorssh.NXOS()}} {
		t.Run(tc.os, func(t *testing.T) {
			t.Parallel()
			testRanges(t, tc.os, tc.prefix, tc.set)
		})
	}
}

// testRanges runs on a switch of ports prefix1 to prefix9.
func testRanges(t *testing.T, networkOS, prefix string, set sshcli.CommandSet) {
	ports := make([]string, 9)
	for i := range ports {
		ports[i] = fmt.Sprintf("%s%d", prefix, i+1)
	}
	srv := vendortest.Start(t, networkOS, ports...)
	access := func(vlan int, names ...int) (b fabric.Batch) {
		for _, n := range names {
			b = append(b, fabric.Change{Op: fabric.OpAccessPort, Port: fabric.Port{Name: ports[n-1], Mode: fabric.ModeAccess, VLAN: vlan}})
		}
		return b
	}
	apply(t, set, srv, access(1, 8, 9)) // nothing to do: every port starts in VLAN 1
	if got := srv.Commands(); len(got) != 0 {
		t.Fatalf("ports already in place: sent %q", got)
	}

	trunk := fabric.Port{Mode: fabric.ModeTrunk, VLAN: 1005, Trunk: []int{1001, 1002}}
	batch := fabric.Batch{
		{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1001}},
		{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1002}},
		{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1005}},
	}
	batch = append(batch, access(1001, 1, 2)...)
	for _, n := range []int{4, 6} {
		p := trunk
		p.Name = ports[n-1]
		batch = append(batch, fabric.Change{Op: fabric.OpTrunkPort, Port: p})
	}
	batch = append(batch, access(1001, 3, 5)...)
	batch = append(batch, access(1002, 7)...)
	apply(t, set, srv, batch)
	// NX-OS says "switchport" first in every interface and saves with copy.
	iface := func(name string, body ...string) []string {
		out := []string{"interface " + prefix + name}
		if networkOS == "nxos" {
			out = append(out, "switchport")
		}
		return append(append(out, body...), "exit")
	}
	accessLines := func(vlan string) []string {
		return []string{"switchport mode access", "switchport access vlan " + vlan, "no shutdown"}
	}
	trunkLines := []string{"switchport mode trunk", "switchport trunk allowed vlan 1001,1002,1005", "switchport trunk native vlan 1005", "no shutdown"}
	want := []string{"configure terminal", "vlan 1001-1002", "exit", "vlan 1005", "exit"}
	want = append(want, iface("1-3", accessLines("1001")...)...)
	want = append(want, iface("5", accessLines("1001")...)...)
	want = append(want, iface("4", trunkLines...)...)
	want = append(want, iface("6", trunkLines...)...)
	want = append(want, iface("7", accessLines("1002")...)...)
	want = append(want, "end", set.Save[0])
	if got := srv.Commands(); !slices.Equal(got, want) {
		t.Fatalf("sent:\n%q\nwant:\n%q", got, want)
	}

	ctx := context.Background()
	sess, err := sshcli.Driver{Set: set, CommandTimeout: 10 * time.Second}.Connect(ctx, endpoint(srv))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sess.Close() }()
	st, err := sess.Read(ctx, ports)
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range ports {
		var w fabric.Port
		switch i + 1 {
		case 1, 2, 3, 5:
			w = fabric.Port{Mode: fabric.ModeAccess, VLAN: 1001}
		case 4, 6:
			w = trunk
		case 7:
			w = fabric.Port{Mode: fabric.ModeAccess, VLAN: 1002}
		default:
			w = fabric.Port{Mode: fabric.ModeAccess, VLAN: 1}
		}
		w.Name = name
		if !fabric.SamePort(st.Ports[name], w) {
			t.Errorf("port %s reads back %+v, want %+v", name, st.Ports[name], w)
		}
	}
	if err := sess.Apply(ctx, batch); err != nil || len(srv.Commands()) != 0 {
		t.Fatalf("second pass: %v, want nothing sent", err)
	}

	leave := fabric.Batch{}
	for _, n := range []int{1, 2, 3, 4, 5, 6, 7} {
		leave = append(leave, fabric.Change{Op: fabric.OpResetPort, Port: fabric.Port{Name: ports[n-1], Mode: fabric.ModeAccess, VLAN: 1}})
	}
	leave = append(leave, fabric.Change{Op: fabric.OpRemoveVLAN, VLAN: fabric.VLAN{ID: 1001}},
		fabric.Change{Op: fabric.OpRemoveVLAN, VLAN: fabric.VLAN{ID: 1002}}, fabric.Change{Op: fabric.OpRemoveVLAN, VLAN: fabric.VLAN{ID: 1005}})
	srv.FailOn("no switchport trunk native vlan")
	var cmdErr *sshcli.CommandError
	if err := sess.Apply(ctx, leave); !errors.As(err, &cmdErr) || cmdErr.Command != "no switchport trunk native vlan" {
		t.Fatalf("refused line under a range: %v, want a CommandError naming it", err)
	}
	sess2, err := sshcli.Driver{Set: set, CommandTimeout: 10 * time.Second}.Connect(ctx, endpoint(srv))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sess2.Close() }()
	if err := sess2.Apply(ctx, leave); err != nil {
		t.Fatalf("the next pass after the refusal: %v", err)
	}
	for _, name := range ports {
		if p, _ := srv.Config.Port(name); p.Mode != "access" || p.Access != 1 {
			t.Errorf("port %s after leaving is %s %d, want access 1", name, p.Mode, p.Access)
		}
	}
	if vl := srv.Config.VLANs(); !slices.Equal(vl, []int{1}) {
		t.Errorf("VLANs after leaving %v, want [1]", vl)
	}
}

// Cumulus (NVUE) names the ports of a batch that get the same lines in one interface list and
// the VLANs in one VLAN list: the switch receives those lines, ends as asked, a second pass sends
// nothing, and a refused list line applies nothing of the batch.
func TestCumulusRanges(t *testing.T) {
	ports := make([]string, 6)
	for i := range ports {
		ports[i] = fmt.Sprintf("swp%d", i+1)
	}
	srv := vendortest.Start(t, "cumulus", ports...)
	set := vendorssh.Cumulus()
	trunk := fabric.Port{Mode: fabric.ModeTrunk, VLAN: 1005, Trunk: []int{1001, 1002}}
	batch := fabric.Batch{
		{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1001}},
		{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1002}},
		{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1005}},
	}
	for i, name := range ports[:5] {
		p := fabric.Port{Name: name, Mode: fabric.ModeAccess, VLAN: 1001}
		op := fabric.OpAccessPort
		if i == 2 || i == 4 {
			p, op = trunk, fabric.OpTrunkPort
			p.Name = name
		}
		batch = append(batch, fabric.Change{Op: op, Port: p})
	}

	before := snapshot(srv)
	srv.FailOn("nv set interface swp3,swp5 bridge domain br_default untagged 1005")
	var cmdErr *sshcli.CommandError
	ctx := context.Background()
	sess, err := sshcli.Driver{Set: set, CommandTimeout: 10 * time.Second}.Connect(ctx, endpoint(srv))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sess.Close() }()
	if err := sess.Apply(ctx, batch); !errors.As(err, &cmdErr) {
		t.Fatalf("refused list line: %v, want a CommandError", err)
	}
	if after := snapshot(srv); after != before {
		t.Fatalf("a refused batch changed the switch:\nbefore %s\nafter  %s", before, after)
	}
	srv.Commands()

	if err := sess.Apply(ctx, batch); err != nil {
		t.Fatal(err)
	}
	br := " bridge domain br_default"
	want := []string{"nv config detach",
		"nv set" + br + " vlan 1001-1002,1005",
		"nv unset interface swp1-2,swp4" + br, "nv set interface swp1-2,swp4" + br + " access 1001",
		"nv set interface swp1-2,swp4 link state up",
		"nv unset interface swp3,swp5" + br, "nv set interface swp3,swp5" + br + " vlan 1001,1002,1005",
		"nv set interface swp3,swp5" + br + " untagged 1005", "nv set interface swp3,swp5 link state up",
		"nv config apply -y", "nv config save"}
	if got := srv.Commands(); !slices.Equal(got, want) {
		t.Fatalf("sent:\n%q\nwant:\n%q", got, want)
	}
	st, err := sess.Read(ctx, ports)
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range ports {
		w := fabric.Port{Mode: fabric.ModeAccess, VLAN: 1001}
		switch i {
		case 2, 4:
			w = trunk
		case 5:
			w.VLAN = 1
		}
		w.Name = name
		if !fabric.SamePort(st.Ports[name], w) {
			t.Errorf("port %s reads back %+v, want %+v", name, st.Ports[name], w)
		}
	}
	if err := sess.Apply(ctx, batch); err != nil || len(srv.Commands()) != 0 {
		t.Fatalf("second pass: %v, want nothing sent", err)
	}
}
