package openvswitch_test

import (
	"context"
	"testing"
	"time"

	"github.com/metalwire/metalwire/internal/switchdriver/openvswitch"
	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// New's driver keeps a switch's connection between sessions, yet every session reads the switch
// as it is: a change made behind the driver's back is read by the next session, and a
// connection the switch closed is replaced without an error.
func TestKeptConnection(t *testing.T) {
	s := ovstest.StartSwitch(t, ovstest.Options{})
	br := s.AddBridge(t, "br0")
	s.AddPorts(t, br, 1, "p1", "p2")
	ep := fabric.Endpoint{Switch: "leaf1", Address: s.TCPRemote, Bridge: br}
	drv := openvswitch.New()
	t.Cleanup(drv.CloseIdle)
	ctx := context.Background()
	session := func(what string, do func(fabric.Session) error) {
		t.Helper()
		sess, err := drv.Connect(ctx, ep)
		if err != nil {
			t.Fatalf("%s: connect: %v", what, err)
		}
		err = do(sess)
		_ = sess.Close()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	readsVLAN := func(what, port string, vlan int) {
		t.Helper()
		session(what, func(sess fabric.Session) error {
			st, err := sess.Read(ctx, []string{port})
			if err == nil && st.Ports[port].VLAN != vlan {
				t.Fatalf("%s: %s reads %+v, want VLAN %d", what, port, st.Ports[port], vlan)
			}
			return err
		})
	}

	readsVLAN("first session", "p1", 1)
	if n := s.Clients(t); n != 1 {
		t.Fatalf("after the first session the switch has %d client connections, want 1 (kept)", n)
	}
	session("apply", func(sess fabric.Session) error {
		return sess.Apply(ctx, fabric.Batch{{Op: fabric.OpAccessPort, Port: fabric.Port{Name: "p1", Mode: fabric.ModeAccess, VLAN: 1001}}})
	})
	if got := s.Ports(t)["p1"].Tag; got != 1001 {
		t.Fatalf("ovs-vsctl shows p1 with tag %d after the apply, want 1001", got)
	}
	s.Vsctl(t, "set", "port", "p2", "tag=7") // behind the driver's back
	readsVLAN("read after a change on the switch", "p2", 7)
	if n := s.Clients(t); n != 1 {
		t.Fatalf("after four sessions the switch has %d client connections, want the one kept", n)
	}

	s.DropClients(t)
	waitClients(t, s, 0)
	readsVLAN("read after the switch closed the connection", "p1", 1001)

	drv.CloseIdle()
	waitClients(t, s, 0)

	// The zero Driver keeps nothing.
	sess, err := openvswitch.Driver{}.Connect(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Read(ctx, []string{"p1"}); err != nil {
		t.Fatal(err)
	}
	_ = sess.Close()
	waitClients(t, s, 0)
}

func waitClients(t *testing.T, s *ovstest.Switch, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := s.Clients(t)
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the switch has %d client connections, want %d", n, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The bridge's OpenFlow connection is kept between sessions too: a session reading and writing
// lists opens none when one is kept, and one the switch dropped while idle is replaced without
// the session failing, its list written all the same.
func TestKeptOpenFlowConnection(t *testing.T) {
	s := ovstest.StartSwitch(t, ovstest.Options{VSwitchd: true, UnnamedNamespace: true, DummyPorts: true})
	br := s.AddBridge(t, "br0")
	s.AddDummyPorts(t, br, 1, "p1", "p2")
	s.WaitMgmt(t, br)
	s.WaitOFPorts(t, "p1", "p2")
	ep := fabric.Endpoint{Switch: "leaf1", Address: s.TCPRemote, Bridge: br, OpenFlowRemote: s.MgmtRemote(br)}
	drv := openvswitch.New()
	t.Cleanup(drv.CloseIdle)
	ctx := context.Background()
	list := func(host, port string) fabric.ACL {
		return fabric.ACL{Name: fabric.ACLName(host, "n"), Cookie: fabric.ACLCookie(host, "n"), Port: port,
			Rules: []fabric.ACLRule{{Direction: fabric.DirectionIngress, Protocol: "ssh", Action: fabric.ActionDeny}}}
	}
	// pass reads the list back, then ensures it (nothing is sent when it is there already), and
	// says how many changes the session sent.
	pass := func(what string, a fabric.ACL) int {
		t.Helper()
		sess, err := drv.Connect(ctx, ep)
		if err != nil {
			t.Fatalf("%s: connect: %v", what, err)
		}
		defer func() { _ = sess.Close() }()
		have, err := sess.Read(ctx, []string{a.Port, a.Name})
		if err != nil {
			t.Fatalf("%s: read: %v", what, err)
		}
		if _, ok := have.ACLs[a.Name]; ok {
			return 0
		}
		if err := sess.Apply(ctx, fabric.Batch{{Op: fabric.OpEnsureACL, ACL: a}}); err != nil {
			t.Fatalf("%s: apply: %v", what, err)
		}
		return sess.(*openvswitch.Session).Changes()
	}
	flowsOf := func(a fabric.ACL) int { return len(s.DumpFlows(t, br, a.Cookie, ^uint64(0))) }
	waitOFClients := func(want int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for n := s.OpenFlowClients(t); n != want; n = s.OpenFlowClients(t) {
			if time.Now().After(deadline) {
				t.Fatalf("ovs-vswitchd has %d OpenFlow connections, want %d", n, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	h1, h2 := list("h1", "p1"), list("h2", "p2")
	if n := pass("first list", h1); n != 1 || flowsOf(h1) == 0 {
		t.Fatalf("first list: %d changes and %d flows on the switch; want one bundle and its flows", n, flowsOf(h1))
	}
	waitOFClients(1)
	if n := pass("the same list again", h1); n != 0 {
		t.Fatalf("a second pass sent %d changes, want none", n)
	}
	if n := s.OpenFlowClients(t); n != 1 {
		t.Fatalf("after two sessions ovs-vswitchd has %d OpenFlow connections, want the one kept", n)
	}

	s.DropOpenFlowClients(t, br)
	waitOFClients(0)
	if n := pass("a list after the switch dropped the kept connection", h2); n != 1 || flowsOf(h2) == 0 {
		t.Fatalf("after the drop: %d changes and %d flows on the switch; want one bundle and its flows", n, flowsOf(h2))
	}
	waitOFClients(1)

	drv.CloseIdle()
	waitOFClients(0)
}
