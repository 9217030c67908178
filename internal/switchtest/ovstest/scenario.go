package ovstest

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// IdleVLAN is where the fabric's ports sit when no cluster uses them.
const IdleVLAN = 1

// Fabric is a switch with four hosts and a VLAN-aware host on a trunk port, every port in the
// idle VLAN, as the fabric controller finds a switch before any cluster uses it.
type Fabric struct {
	Switch *Switch
	// Bridge is the managed bridge (Endpoint.Bridge).
	Bridge         string
	H1, H2, H3, H4 *Host
	Trunk          *TrunkHost
}

// NewFabric starts Open vSwitch with ovs-vswitchd and cables the hosts.
func NewFabric(t testing.TB) *Fabric {
	t.Helper()
	s := StartSwitch(t, Options{VSwitchd: true})
	// ovs-ctl records the version when it starts Open vSwitch; do as it does.
	ver := strings.Fields(run(t, nil, "ovs-vswitchd", "--version"))
	s.Vsctl(t, "set", "Open_vSwitch", ".", "ovs_version="+ver[len(ver)-1])
	f := &Fabric{Switch: s, Bridge: s.AddBridge(t, "br0")}
	f.H1 = s.AttachHost(t, f.Bridge, "h1", "198.51.100.1", 24, IdleVLAN)
	f.H2 = s.AttachHost(t, f.Bridge, "h2", "198.51.100.2", 24, IdleVLAN)
	f.H3 = s.AttachHost(t, f.Bridge, "h3", "198.51.100.3", 24, IdleVLAN)
	f.H4 = s.AttachHost(t, f.Bridge, "h4", "198.51.100.4", 24, IdleVLAN)
	f.Trunk = s.AttachTrunkHost(t, f.Bridge, IdleVLAN, []int{1001, 1002, 1003},
		[]string{"198.51.100.101", "198.51.100.102", "198.51.100.103"}, 24)
	return f
}

// ManagedPorts are the switch ports the scenario configures.
func (f *Fabric) ManagedPorts() []string {
	return []string{f.H1.Port, f.H2.Port, f.H3.Port, f.H4.Port, f.Trunk.Port}
}

// Changer is a session that counts the changes it sent to the switch.
type Changer interface {
	fabric.Session
	Changes() int
}

// RunScenario drives the fabric through a driver the way the fabric controller does, one
// session per batch, and checks what a user would notice on the wire and on the switch.
func RunScenario(t *testing.T, f *Fabric, drv fabric.Driver, ep fabric.Endpoint) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	open := func() Changer {
		t.Helper()
		sess, err := drv.Connect(ctx, ep)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		t.Cleanup(func() { _ = sess.Close() })
		c, ok := sess.(Changer)
		if !ok {
			t.Fatalf("%T does not count its changes", sess)
		}
		return c
	}
	apply := func(b fabric.Batch) int {
		t.Helper()
		sess := open()
		if err := sess.Apply(ctx, b); err != nil {
			t.Fatalf("apply %v: %v", b, err)
		}
		return sess.Changes()
	}
	sw, ports := f.Switch, f.ManagedPorts()

	info, err := open().Info(ctx)
	if err != nil || !strings.Contains(info.Version, "3.") {
		t.Fatalf("Info: %+v, %v; want the Open vSwitch version", info, err)
	}
	rowsBefore := sw.Ports(t)
	readBefore, err := open().Read(ctx, ports)
	if err != nil {
		t.Fatalf("read before: %v", err)
	}
	for _, p := range ports {
		if got := readBefore.Ports[p]; got.Mode != fabric.ModeAccess || got.VLAN != IdleVLAN {
			t.Fatalf("before: port %s reads %+v, want access in idle VLAN %d", p, got, IdleVLAN)
		}
	}

	// Two clusters: h1 and h2 in 1001, h3 in 1002, h4 in 1003; the trunk host in 1001 and 1002.
	join := fabric.Batch{
		{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1001}},
		{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1002}},
		{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1003}},
		{Op: fabric.OpAccessPort, Port: fabric.Port{Name: f.H1.Port, Mode: fabric.ModeAccess, VLAN: 1001}},
		{Op: fabric.OpAccessPort, Port: fabric.Port{Name: f.H2.Port, Mode: fabric.ModeAccess, VLAN: 1001}},
		{Op: fabric.OpAccessPort, Port: fabric.Port{Name: f.H3.Port, Mode: fabric.ModeAccess, VLAN: 1002}},
		{Op: fabric.OpAccessPort, Port: fabric.Port{Name: f.H4.Port, Mode: fabric.ModeAccess, VLAN: 1003}},
		{Op: fabric.OpTrunkPort, Port: fabric.Port{Name: f.Trunk.Port, Mode: fabric.ModeTrunk, Trunk: []int{1001, 1002}}},
	}
	if n := apply(join); n != 1 {
		t.Fatalf("join: %d changes sent, want 1 (one transaction or command for the batch)", n)
	}
	rows := sw.Ports(t)
	if r := rows[f.H1.Port]; r.Tag != 1001 || r.VLANMode != "access" || len(r.Trunks) != 0 {
		t.Fatalf("ovs-vsctl shows h1's port as %+v, want tag 1001 vlan_mode access", r)
	}
	if r := rows[f.Trunk.Port]; r.Tag != 0 || r.VLANMode != "trunk" || !slices.Equal(r.Trunks, []int{1001, 1002}) {
		t.Fatalf("ovs-vsctl shows the trunk port as %+v, want vlan_mode trunk trunks [1001 1002]", r)
	}
	read, err := open().Read(ctx, ports)
	if err != nil {
		t.Fatalf("read after join: %v", err)
	}
	for _, c := range join[3:] {
		if got := read.Ports[c.Port.Name]; !reflect.DeepEqual(got, c.Port) {
			t.Fatalf("read %s = %+v, want what was applied: %+v", c.Port.Name, got, c.Port)
		}
	}
	if !hasVLANs(read.VLANs, 1001, 1002, 1003) {
		t.Fatalf("read VLANs %v, want 1001, 1002 and 1003 among them", read.VLANs)
	}

	expectReach(t, f.H1, f.H2, true)
	expectReach(t, f.H1, f.H3, false)
	expectReach(t, f.Trunk.VLANs[1001], f.H1, true)
	expectReach(t, f.Trunk.VLANs[1002], f.H3, true)
	expectReach(t, f.Trunk.VLANs[1003], f.H4, false) // the trunk carries 1001 and 1002 only

	// The same state again, and an empty batch: nothing is sent, no Port row changes.
	versions := sw.PortVersions(t)
	if n := apply(join); n != 0 {
		t.Fatalf("re-applying the same state sent %d changes, want 0", n)
	}
	if n := apply(nil); n != 0 {
		t.Fatalf("an empty batch sent %d changes, want 0", n)
	}
	if after := sw.PortVersions(t); !reflect.DeepEqual(after, versions) {
		t.Fatalf("Port rows changed by a batch that changes nothing:\nbefore %v\nafter  %v", versions, after)
	}

	// A batch naming a port the switch lacks is refused whole, before anything is sent.
	sess := open()
	err = sess.Apply(ctx, fabric.Batch{
		{Op: fabric.OpResetPort, Port: fabric.Port{Name: f.H1.Port, VLAN: IdleVLAN}},
		{Op: fabric.OpAccessPort, Port: fabric.Port{Name: "no-such-port", Mode: fabric.ModeAccess, VLAN: 1001}},
	})
	if err == nil || !strings.Contains(err.Error(), `"no-such-port"`) {
		t.Fatalf("a batch with a missing port: %v, want an error naming the port", err)
	}
	// Open vSwitch has no multi-chassis LAG.
	err = sess.Apply(ctx, fabric.Batch{{Op: fabric.OpEnsureLAG, LAG: fabric.LAG{Name: "bond0", Members: []string{f.H1.Port, f.H2.Port},
		MLAG: &fabric.MLAG{Pair: "p1", Domain: 1, Peer: "leaf2"}}}})
	if !errors.Is(err, fabric.ErrUnsupported) {
		t.Fatalf("ensure-lag of an MLAG: %v, want ErrUnsupported", err)
	}
	if after := sw.PortVersions(t); !reflect.DeepEqual(after, versions) || sess.Changes() != 0 {
		t.Fatalf("a refused batch changed the switch (%d changes sent)", sess.Changes())
	}

	// h2 leaves: back in the idle VLAN, it reaches nobody.
	if n := apply(fabric.Batch{{Op: fabric.OpResetPort, Port: fabric.Port{Name: f.H2.Port, VLAN: IdleVLAN}}}); n != 1 {
		t.Fatalf("reset h2: %d changes, want 1", n)
	}
	if r := sw.Ports(t)[f.H2.Port]; r.Tag != IdleVLAN || r.VLANMode != "" || len(r.Trunks) != 0 {
		t.Fatalf("ovs-vsctl shows h2's port after reset as %+v, want tag %d and nothing else", r, IdleVLAN)
	}
	expectReach(t, f.H2, f.H1, false)
	expectReach(t, f.H2, f.H3, false)

	// Everyone leaves: the switch is as it was before.
	leave := make(fabric.Batch, 0, 7)
	for _, p := range []string{f.H1.Port, f.H3.Port, f.H4.Port, f.Trunk.Port} {
		leave = append(leave, fabric.Change{Op: fabric.OpResetPort, Port: fabric.Port{Name: p, VLAN: IdleVLAN}})
	}
	for _, v := range []int{1001, 1002, 1003} {
		leave = append(leave, fabric.Change{Op: fabric.OpRemoveVLAN, VLAN: fabric.VLAN{ID: v}})
	}
	if n := apply(leave); n != 1 {
		t.Fatalf("reset all: %d changes, want 1", n)
	}
	if after := sw.Ports(t); !reflect.DeepEqual(after, rowsBefore) {
		t.Fatalf("after resetting everything the switch differs from before:\nbefore %+v\nafter  %+v", rowsBefore, after)
	}
	readAfter, err := open().Read(ctx, ports)
	if err != nil || !reflect.DeepEqual(readAfter, readBefore) {
		t.Fatalf("read after reset = %+v (%v), want what was read before: %+v", readAfter, err, readBefore)
	}
}

func expectReach(t *testing.T, from, to *Host, want bool) {
	t.Helper()
	if want {
		if !Reaches(t, from, to.Addr, 8) {
			t.Fatalf("%s (%s) cannot reach %s (%s), want it to", from.Name, from.Addr, to.Name, to.Addr)
		}
		return
	}
	// ovs-vswitchd applies a transaction a moment after the database has it (longer on a loaded
	// machine): a port just moved out may still forward for that moment, so a host cut off is
	// one whose pings fail twice in a row within a few seconds.
	deadline := time.Now().Add(10 * time.Second)
	for Reaches(t, from, to.Addr, 2) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (%s) reaches %s (%s), want it not to", from.Name, from.Addr, to.Name, to.Addr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func hasVLANs(vlans []fabric.VLAN, ids ...int) bool {
	have := map[int]bool{}
	for _, v := range vlans {
		have[v.ID] = true
	}
	for _, id := range ids {
		if !have[id] {
			return false
		}
	}
	return true
}
