package openvswitch_test

import (
	"context"
	"strings"
	"testing"

	"github.com/metalwire/metalwire/internal/switchdriver/openvswitch"
	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// Access lists and port state through OVSDB and the bridge's OpenFlow management socket (found
// beside the unix OVSDB socket), with real traffic.
func TestACLsAndPortState(t *testing.T) {
	f := ovstest.NewACLFabric(t)
	ep := fabric.Endpoint{Switch: "leaf1", Address: f.Switch.UnixRemote, Bridge: f.Bridge}
	ovstest.RunACLScenario(t, f, openvswitch.Driver{}, ep)
}

// Over a tcp: OVSDB remote no OpenFlow endpoint can be guessed: a list or a port shut is refused
// naming the switch and the field to set, before anything is sent; a batch of neither works.
func TestACLNeedsAnOpenFlowRemote(t *testing.T) {
	s := ovstest.StartSwitch(t, ovstest.Options{})
	br := s.AddBridge(t, "br0")
	s.AddPorts(t, br, 1, "p1")
	ctx := context.Background()
	sess, err := openvswitch.Driver{}.Connect(ctx, fabric.Endpoint{Switch: "leaf1", Address: s.TCPRemote, Bridge: br})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sess.Close() }()
	a := fabric.ACL{Name: fabric.ACLName("h1", "n"), Cookie: fabric.ACLCookie("h1", "n"), Port: "p1",
		Rules: []fabric.ACLRule{{Direction: fabric.DirectionIngress, Protocol: "ssh", Action: fabric.ActionDeny}}}
	versions := s.PortVersions(t)
	for _, b := range []fabric.Batch{
		{{Op: fabric.OpAccessPort, Port: fabric.Port{Name: "p1", Mode: fabric.ModeAccess, VLAN: 5}}, {Op: fabric.OpEnsureACL, ACL: a}},
		{{Op: fabric.OpAccessPort, Port: fabric.Port{Name: "p1", Mode: fabric.ModeAccess, VLAN: 5, Down: true}}},
	} {
		err := sess.Apply(ctx, b)
		if err == nil || !strings.Contains(err.Error(), "switch leaf1") || !strings.Contains(err.Error(), "openFlowRemote") {
			t.Errorf("apply %v: %v; want an error naming the switch and openFlowRemote", b, err)
		}
	}
	if _, err := sess.Read(ctx, []string{"p1", a.Name}); err == nil || !strings.Contains(err.Error(), "openFlowRemote") {
		t.Errorf("read of a list: %v; want an error naming openFlowRemote", err)
	}
	if s.PortVersions(t)["p1"] != versions["p1"] {
		t.Error("a refused batch changed p1")
	}
	// A port shut by hand on such a switch is not metalwire's to open: it reads up, and a batch
	// that wants it up goes through without OpenFlow.
	s.Vsctl(t, "set", "Interface", "p1", "admin_state=down")
	if st, err := sess.Read(ctx, []string{"p1"}); err != nil || st.Ports["p1"].Down {
		t.Errorf("read of a port shut by hand, without an OpenFlow endpoint: %+v, %v; want it up", st.Ports["p1"], err)
	}
	if err := sess.Apply(ctx, fabric.Batch{{Op: fabric.OpAccessPort, Port: fabric.Port{Name: "p1", Mode: fabric.ModeAccess, VLAN: 5}}}); err != nil {
		t.Errorf("a batch with no list and no port shut: %v", err)
	}
	// A list whose cookie is not metalwire's is refused whatever the remote.
	bad := a
	bad.Cookie = 0x1
	if err := sess.Apply(ctx, fabric.Batch{{Op: fabric.OpRemoveACL, ACL: bad}}); err == nil || !strings.Contains(err.Error(), "not metalwire's") {
		t.Errorf("remove-acl of cookie 0x1: %v; want a refusal", err)
	}
}
