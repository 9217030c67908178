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
	"github.com/metalwire/metalwire/internal/switchdriver/vendortest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// EOS configures the ports of a batch that get the same lines together, consecutive ports as one
// range, and consecutive VLANs as one range: the switch receives those lines, ends as asked (read
// back through the driver), a second pass sends nothing, and a refused line under a range fails
// the batch with the switch's message.
func TestEOSRanges(t *testing.T) {
	ports := make([]string, 9)
	for i := range ports {
		ports[i] = fmt.Sprintf("Ethernet%d", i+1)
	}
	srv := vendortest.Start(t, "eos", ports...)
	set := vendorssh.EOS()
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
	want := []string{"configure terminal",
		"vlan 1001-1002", "exit", "vlan 1005", "exit",
		"interface Ethernet1-3", "switchport mode access", "switchport access vlan 1001", "exit",
		"interface Ethernet5", "switchport mode access", "switchport access vlan 1001", "exit",
		"interface Ethernet4", "switchport mode trunk", "switchport trunk allowed vlan 1001,1002,1005", "switchport trunk native vlan 1005", "exit",
		"interface Ethernet6", "switchport mode trunk", "switchport trunk allowed vlan 1001,1002,1005", "switchport trunk native vlan 1005", "exit",
		"interface Ethernet7", "switchport mode access", "switchport access vlan 1002", "exit",
		"end", "write memory"}
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
