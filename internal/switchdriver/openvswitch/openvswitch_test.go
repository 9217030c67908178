package openvswitch_test

import (
	"context"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/metalwire/metalwire/internal/switchdriver/openvswitch"
	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// The whole fabric through OVSDB over a tcp: remote, as the controller would drive it.
func TestFabricOverTCP(t *testing.T) {
	f := ovstest.NewFabric(t)
	ep := fabric.Endpoint{Switch: "leaf1", Address: f.Switch.TCPRemote, Bridge: f.Bridge}
	ovstest.RunScenario(t, f, openvswitch.Driver{}, ep)
}

// A plain address with a port becomes a tcp: remote; a unix: remote works as well.
func TestRemotes(t *testing.T) {
	s := ovstest.StartSwitch(t, ovstest.Options{})
	br := s.AddBridge(t, "br0")
	s.AddPorts(t, br, 1, "p1")
	host, port, _ := strings.Cut(s.TCPAddr, ":")
	for _, ep := range []fabric.Endpoint{
		{Switch: "leaf1", Address: s.UnixRemote, Bridge: br},
		{Switch: "leaf1", Address: host, Port: atoi(t, port), Bridge: br},
	} {
		sess, err := openvswitch.Driver{}.Connect(context.Background(), ep)
		if err != nil {
			t.Fatalf("connect %+v: %v", ep, err)
		}
		st, err := sess.Read(context.Background(), []string{"p1", "absent"})
		_ = sess.Close()
		if err != nil || len(st.Ports) != 1 || st.Ports["p1"].VLAN != 1 {
			t.Fatalf("read through %s: %+v, %v; want p1 in VLAN 1 and no absent port", ep.Address, st, err)
		}
	}
}

func TestUnreachableSwitchFailsFast(t *testing.T) {
	port := ovstest.FreePort(t) // nobody listens there
	start := time.Now()
	_, err := openvswitch.Driver{DialTimeout: 2 * time.Second}.Connect(context.Background(),
		fabric.Endpoint{Switch: "leaf9", Address: "127.0.0.1", Port: port})
	if err == nil || !strings.Contains(err.Error(), "switch leaf9") || !strings.Contains(err.Error(), "tcp:127.0.0.1:") {
		t.Fatalf("connect to a closed port: %v, want an error naming the switch and the remote", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("connect took %s to fail, want under the dial timeout", d)
	}
}

func TestMissingBridgeIsNamed(t *testing.T) {
	s := ovstest.StartSwitch(t, ovstest.Options{})
	sess, err := openvswitch.Driver{}.Connect(context.Background(), fabric.Endpoint{Switch: "leaf1", Address: s.UnixRemote, Bridge: "nope"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sess.Close() }()
	_, err = sess.Read(context.Background(), []string{"p1"})
	if err == nil || !strings.Contains(err.Error(), `bridge "nope" does not exist`) {
		t.Fatalf("read with a missing bridge: %v", err)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A port of another bridge is never touched through the managed bridge, whether the batch would
// change it or finds it already as asked; the rest of the batch is not applied either.
func TestPortOfAnotherBridgeIsRefused(t *testing.T) {
	s := ovstest.StartSwitch(t, ovstest.Options{})
	managed, other := s.AddBridge(t, "br0"), s.AddBridge(t, "br1")
	s.AddPorts(t, managed, 1, "p1")
	s.AddPorts(t, other, 1, "q1")
	ctx := context.Background()
	versions := s.PortVersions(t)
	for _, batch := range []fabric.Batch{
		{
			{Op: fabric.OpAccessPort, Port: fabric.Port{Name: "p1", Mode: fabric.ModeAccess, VLAN: 1001}},
			{Op: fabric.OpAccessPort, Port: fabric.Port{Name: "q1", Mode: fabric.ModeAccess, VLAN: 1001}},
		},
		{{Op: fabric.OpResetPort, Port: fabric.Port{Name: "q1", VLAN: 1}}}, // q1 already reads so
	} {
		sess, err := openvswitch.Driver{}.Connect(ctx, fabric.Endpoint{Switch: "leaf1", Address: s.UnixRemote, Bridge: managed})
		if err != nil {
			t.Fatal(err)
		}
		err = sess.Apply(ctx, batch)
		changes := sess.(*openvswitch.Session).Changes()
		_ = sess.Close()
		if err == nil || !strings.Contains(err.Error(), `port "q1" is not on bridge `+managed) {
			t.Fatalf("apply %v: %v, want an error saying q1 is not on %s", batch, err, managed)
		}
		if changes != 0 {
			t.Fatalf("apply %v: %d changes sent, want none", batch, changes)
		}
	}
	if after := s.PortVersions(t); !reflect.DeepEqual(after, versions) {
		t.Fatalf("a refused batch changed Port rows:\nbefore %v\nafter  %v", versions, after)
	}
}
