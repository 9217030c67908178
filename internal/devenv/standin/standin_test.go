package standin_test

import (
	"context"
	"errors"
	"testing"

	"github.com/metalwire/metalwire/internal/devenv/standin"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// The stand-in refuses what a real switch would: a port in a VLAN the switch lacks (the whole
// batch, nothing half applied), a second session at once, and any session while down.
func TestStandInBehavesLikeASwitch(t *testing.T) {
	ctx := context.Background()
	d := standin.New("openvswitch")
	sw := d.Switch("10.0.0.1")
	sw.AddPorts(1, "p1")
	ep := fabric.Endpoint{Switch: "s1", Address: "10.0.0.1"}

	s, err := d.Connect(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Connect(ctx, ep); err == nil {
		t.Error("a second session at once was accepted")
	}
	bad := fabric.Batch{{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 5}}, {Op: fabric.OpAccessPort, Port: fabric.Port{Name: "p1", Mode: fabric.ModeAccess, VLAN: 7}}}
	if err := s.Apply(ctx, bad); err == nil {
		t.Error("a port in an undefined VLAN was accepted")
	}
	if got := sw.VLANs(); len(got) != 0 {
		t.Errorf("a refused batch changed the switch: VLANs %v", got)
	}
	good := fabric.Batch{{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 7}}, {Op: fabric.OpAccessPort, Port: fabric.Port{Name: "p1", Mode: fabric.ModeAccess, VLAN: 7}}}
	if err := s.Apply(ctx, good); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, fabric.Batch{{Op: fabric.OpEnsureLAG, LAG: fabric.LAG{Name: "lag1", MLAG: &fabric.MLAG{Pair: "p", Domain: 1, Peer: "s2"}}}}); !errors.Is(err, fabric.ErrUnsupported) {
		t.Errorf("MLAG: %v, want ErrUnsupported", err)
	}
	st, err := s.Read(ctx, []string{"p1", "absent"})
	if err != nil || st.Ports["p1"].VLAN != 7 || len(st.Ports) != 1 {
		t.Errorf("Read = %+v, %v", st, err)
	}
	_ = s.Close()
	if a, c := sw.Counts(); a != 1 || c != 2 {
		t.Errorf("Counts = %d batches, %d changes; want 1, 2", a, c)
	}
	sw.SetDown(true)
	if _, err := d.Connect(ctx, ep); !errors.Is(err, standin.ErrDown) {
		t.Errorf("Connect to a down switch: %v", err)
	}
}

// A bond takes its members' ports and gives them back idle when it goes, as on Open vSwitch.
func TestStandInBonds(t *testing.T) {
	ctx := context.Background()
	d := standin.New("openvswitch")
	sw := d.Switch("10.0.0.2")
	sw.AddPorts(1, "p1", "p2")
	s, err := d.Connect(ctx, fabric.Endpoint{Switch: "s1", Address: "10.0.0.2"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	bond := fabric.LAG{Name: "lag1", Members: []string{"p1", "p2"}, LACP: true, Port: fabric.Port{Name: "lag1", Mode: fabric.ModeAccess, VLAN: 7}}
	if err := s.Apply(ctx, fabric.Batch{{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 7}}, {Op: fabric.OpEnsureLAG, LAG: bond}}); err != nil {
		t.Fatal(err)
	}
	st, err := s.Read(ctx, []string{"p1", "p2", "lag1"})
	if err != nil || len(st.Ports) != 0 || !fabric.SameLAG(st.LAGs["lag1"], bond) {
		t.Fatalf("after ensure-lag Read = %+v, %v; want the bond and no member ports", st, err)
	}
	undo := bond
	undo.Port = fabric.Port{Name: "lag1", Mode: fabric.ModeAccess, VLAN: 1}
	if err := s.Apply(ctx, fabric.Batch{{Op: fabric.OpRemoveLAG, LAG: undo}}); err != nil {
		t.Fatal(err)
	}
	st, err = s.Read(ctx, []string{"p1", "p2", "lag1"})
	if err != nil || len(st.LAGs) != 0 || st.Ports["p1"].VLAN != 1 || st.Ports["p2"].VLAN != 1 {
		t.Fatalf("after remove-lag Read = %+v, %v; want p1 and p2 idle", st, err)
	}
}

// The stand-in keeps access lists and port state as a switch would: read back as applied, so a
// second pass of the controller sends nothing, and a list with a bad rule is refused whole.
func TestStandInKeepsListsAndPortState(t *testing.T) {
	ctx := context.Background()
	d := standin.New("simulated")
	sw := d.Switch("10.0.0.2")
	sw.AddPorts(1, "p1")
	s, err := d.Connect(ctx, fabric.Endpoint{Switch: "s1", Address: "10.0.0.2"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	rules := []fabric.ACLRule{{Direction: fabric.DirectionIngress, Protocol: "ssh", Action: fabric.ActionDeny}}
	want := fabric.Desired([]fabric.PortWant{{Switch: "s1", Port: "p1", Mode: fabric.ModeAccess, VLAN: 7, Down: true,
		ACL: &fabric.ACLWant{Name: fabric.ACLName("h1", "n"), Cookie: fabric.ACLCookie("h1", "n"), Rules: rules}}})["s1"]
	names := []string{"p1", fabric.ACLName("h1", "n")}
	have, err := s.Read(ctx, names)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, fabric.Diff(want, have, fabric.Record{}, 1)); err != nil {
		t.Fatal(err)
	}
	if have, err = s.Read(ctx, names); err != nil {
		t.Fatal(err)
	}
	if b := fabric.Diff(want, have, fabric.RecordOf(want), 1); len(b) != 0 {
		t.Errorf("second pass would send %v", b)
	}
	if p, _ := sw.Port("p1"); !p.Down {
		t.Error("p1 is not down")
	}
	bad := fabric.ACL{Name: "aclbad", Port: "p1", Rules: []fabric.ACLRule{{Direction: "sideways", Protocol: "all", Action: fabric.ActionDeny}}}
	if err := s.Apply(ctx, fabric.Batch{{Op: fabric.OpEnsureACL, ACL: bad}}); err == nil {
		t.Error("a list with a bad rule was accepted")
	}
}
