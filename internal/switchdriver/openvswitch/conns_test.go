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
