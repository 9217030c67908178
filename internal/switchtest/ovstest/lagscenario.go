package ovstest

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// LAGFabric is a switch with two hosts whose two cards each are bonded on the host's side, all
// four switch ports idle, as the fabric controller finds them before a bonded network uses them.
type LAGFabric struct {
	Switch *Switch
	Bridge string
	B1, B2 *BondedHost
}

// NewLAGFabric starts Open vSwitch with ovs-vswitchd and cables two bonded hosts (LACP bonds
// on their side when lacp, active-backup otherwise).
func NewLAGFabric(t testing.TB, lacp bool) *LAGFabric {
	t.Helper()
	Require(t, "ovs-appctl") // the scenario reads LACP and bond state from ovs-vswitchd
	s := StartSwitch(t, Options{VSwitchd: true})
	f := &LAGFabric{Switch: s, Bridge: s.AddBridge(t, "br0")}
	f.B1 = s.AttachBondedHost(t, f.Bridge, "b1", "198.51.100.11", 24, IdleVLAN, lacp)
	f.B2 = s.AttachBondedHost(t, f.Bridge, "b2", "198.51.100.12", 24, IdleVLAN, lacp)
	return f
}

// RunLAGScenario bonds each host's two switch ports as the fabric controller would (one session
// per batch), and checks what a user would notice: LACP negotiated with the host, traffic
// through the bonds, kept when a member link goes down, nothing sent when nothing changed, and
// two idle access ports back when the hosts leave.
func RunLAGScenario(t *testing.T, f *LAGFabric, drv fabric.Driver, ep fabric.Endpoint) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	open := func() Changer {
		t.Helper()
		sess, err := drv.Connect(ctx, ep)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		t.Cleanup(func() { _ = sess.Close() })
		return sess.(Changer)
	}
	apply := func(b fabric.Batch) int {
		t.Helper()
		sess := open()
		if err := sess.Apply(ctx, b); err != nil {
			t.Fatalf("apply %v: %v", b, err)
		}
		return sess.Changes()
	}
	sw := f.Switch
	rowsBefore := sw.Ports(t)
	hosts := []*BondedHost{f.B1, f.B2}
	bonds := make([]fabric.LAG, len(hosts))
	names := make([]string, 0, len(hosts))
	for i, h := range hosts {
		bonds[i] = fabric.LAG{Name: fabric.LAGName(h.Name, "control"), Members: slices.Sorted(slices.Values(h.Ports)), LACP: true, FastRate: true,
			Port: fabric.Port{Name: fabric.LAGName(h.Name, "control"), Mode: fabric.ModeAccess, VLAN: 1001}}
		names = append(names, bonds[i].Name)
	}
	allPorts := slices.Concat(names, f.B1.Ports, f.B2.Ports)

	join := make(fabric.Batch, 0, 1+len(bonds))
	join = append(join, fabric.Change{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1001}})
	for _, l := range bonds {
		join = append(join, fabric.Change{Op: fabric.OpEnsureLAG, LAG: l})
	}
	if n := apply(join); n != 1 {
		t.Fatalf("join: %d changes sent, want 1 (one transaction or command for the batch)", n)
	}
	read, err := open().Read(ctx, allPorts)
	if err != nil {
		t.Fatalf("read after join: %v", err)
	}
	for _, l := range bonds {
		if got := read.LAGs[l.Name]; !fabric.SameLAG(got, l) {
			t.Fatalf("read bond %s = %+v, want what was applied: %+v", l.Name, got, l)
		}
	}
	for _, h := range hosts {
		for _, p := range h.Ports {
			if _, alone := read.Ports[p]; alone {
				t.Fatalf("port %s still reads as a port of its own after it was bonded", p)
			}
		}
	}
	// LACP negotiated with each host's bond: both members in use on both sides.
	for i, l := range bonds {
		want := []string{"status: active negotiated"}
		for _, p := range hosts[i].Ports {
			want = append(want, "member: "+p+": current attached")
		}
		sw.WaitAppctl(t, 30*time.Second, want, "lacp/show", l.Name)
		want = []string{"status: active negotiated"}
		for _, c := range hosts[i].Cards {
			want = append(want, "member: "+c+": current attached")
		}
		sw.WaitAppctl(t, 30*time.Second, want, "lacp/show", hosts[i].Bond)
		want = []string{"bond_mode: balance-tcp", "lacp_status: negotiated"}
		for _, p := range hosts[i].Ports {
			want = append(want, "member "+p+": enabled")
		}
		sw.WaitAppctl(t, 30*time.Second, want, "bond/show", l.Name)
	}
	expectReach(t, f.B1.Host, f.B2.Host, true)

	// Nothing changed: nothing sent, no Port row written.
	versions := sw.PortVersions(t)
	if n := apply(join); n != 0 {
		t.Fatalf("re-applying the same bonds sent %d changes, want 0", n)
	}
	if after := sw.PortVersions(t); !reflect.DeepEqual(after, versions) {
		t.Fatalf("Port rows changed by a batch that changes nothing:\nbefore %v\nafter  %v", versions, after)
	}

	// One member link down: traffic keeps flowing over the other.
	f.B1.SetCardDown(t, sw, 0, true)
	sw.WaitAppctl(t, 30*time.Second, []string{"member " + f.B1.Ports[0] + ": disabled"}, "bond/show", bonds[0].Name)
	expectReach(t, f.B1.Host, f.B2.Host, true)
	f.B1.SetCardDown(t, sw, 0, false)

	// A bond across two switches is not for Open vSwitch: refused whole, nothing sent.
	sess := open()
	mlag := bonds[0]
	mlag.MLAG = &fabric.MLAG{Pair: "p1", Domain: 1, Peer: "leaf2"}
	err = sess.Apply(ctx, fabric.Batch{{Op: fabric.OpEnsureLAG, LAG: mlag}})
	if !errors.Is(err, fabric.ErrUnsupported) || sess.Changes() != 0 {
		t.Fatalf("an MLAG bond: %v (%d changes), want ErrUnsupported and nothing sent", err, sess.Changes())
	}

	// The hosts leave: each bond goes, its two ports come back idle.
	leave := make(fabric.Batch, 0, len(bonds)+1)
	for _, l := range bonds {
		l.Port = fabric.Port{Name: l.Name, Mode: fabric.ModeAccess, VLAN: IdleVLAN}
		leave = append(leave, fabric.Change{Op: fabric.OpRemoveLAG, LAG: l})
	}
	leave = append(leave, fabric.Change{Op: fabric.OpRemoveVLAN, VLAN: fabric.VLAN{ID: 1001}})
	if n := apply(leave); n != 1 {
		t.Fatalf("leave: %d changes, want 1", n)
	}
	after := sw.Ports(t)
	for _, h := range hosts {
		for _, p := range h.Ports {
			if r := after[p]; r.Tag != IdleVLAN || r.VLANMode != "" || len(r.Trunks) != 0 {
				t.Fatalf("after leaving, port %s is %+v, want an access port of the idle VLAN %d", p, r, IdleVLAN)
			}
		}
	}
	if !reflect.DeepEqual(after, rowsBefore) {
		t.Fatalf("after the hosts left the switch differs from before:\nbefore %+v\nafter  %+v", rowsBefore, after)
	}
	readAfter, err := open().Read(ctx, allPorts)
	if err != nil || len(readAfter.LAGs) != 0 || len(readAfter.Ports) != 4 {
		t.Fatalf("read after leaving: %+v, %v; want four idle ports and no bond", readAfter, err)
	}
	if n := apply(leave); n != 0 {
		t.Fatalf("leaving again sent %d changes, want 0", n)
	}
}
