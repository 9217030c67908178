package openvswitchssh_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/metalwire/metalwire/internal/switchdriver/openvswitchssh"
	"github.com/metalwire/metalwire/internal/switchdriver/sshcli"
	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// The whole fabric through ovs-vsctl over SSH (password login), as the controller would drive it.
// The switch's sshd points ovs-vsctl at the test's database with OVS_RUNDIR, so the command lines
// are those a real switch gets.
func TestFabricOverSSH(t *testing.T) {
	f := ovstest.NewFabric(t)
	srv := ovstest.StartSSHD(t, map[string]string{"OVS_RUNDIR": f.Switch.Dir})
	ep := fabric.Endpoint{Switch: "leaf1", Address: srv.Host, Port: srv.Port, HostKey: srv.HostKey, Bridge: f.Bridge,
		Credentials: fabric.Credentials{Username: srv.User, Password: srv.Password}}
	ovstest.RunScenario(t, f, openvswitchssh.New(), ep)
}

// Key login; a port missing from the bridge is refused before anything runs; ovs-vsctl's own
// errors come back naming the command.
func TestKeyLoginAndErrors(t *testing.T) {
	s := ovstest.StartSwitch(t, ovstest.Options{})
	br := s.AddBridge(t, "br0")
	other := s.AddBridge(t, "br1")
	s.AddPorts(t, br, 1, "p1")
	s.AddPorts(t, other, 1, "q1")
	srv := ovstest.StartSSHD(t, map[string]string{"OVS_RUNDIR": s.Dir})
	ep := fabric.Endpoint{Switch: "leaf1", Address: srv.Host, Port: srv.Port, HostKey: srv.HostKey, Bridge: br,
		Credentials: fabric.Credentials{Username: srv.User, PrivateKey: srv.ClientKey}}
	ctx := context.Background()
	sess, err := openvswitchssh.New().Connect(ctx, ep)
	if err != nil {
		t.Fatalf("key login: %v", err)
	}
	defer func() { _ = sess.Close() }()
	info, err := sess.Info(ctx)
	if err != nil || !strings.HasPrefix(info.Version, "Open vSwitch 3.") {
		t.Fatalf("Info = %+v, %v", info, err)
	}
	// q1 exists, but on another bridge than the managed one.
	err = sess.Apply(ctx, fabric.Batch{
		{Op: fabric.OpAccessPort, Port: fabric.Port{Name: "p1", Mode: fabric.ModeAccess, VLAN: 5}},
		{Op: fabric.OpAccessPort, Port: fabric.Port{Name: "q1", Mode: fabric.ModeAccess, VLAN: 5}},
	})
	if err == nil || !strings.Contains(err.Error(), `no port "q1"`) {
		t.Fatalf("a port of another bridge: %v", err)
	}
	if got := s.Ports(t)["p1"].Tag; got != 1 {
		t.Fatalf("p1 tag %d after a refused batch, want 1 (nothing sent)", got)
	}
	// Without a bridge every port is checked; the port goes missing between read and write:
	// ovs-vsctl's error is reported with the command.
	set := openvswitchssh.CommandSet()
	set.ReadCommands, set.ParseState = nil, nil
	raw, err := sshcli.Driver{Set: set}.Connect(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = raw.Close() }()
	err = raw.Apply(ctx, fabric.Batch{{Op: fabric.OpAccessPort, Port: fabric.Port{Name: "gone", Mode: fabric.ModeAccess, VLAN: 5}}})
	var cmdErr *sshcli.CommandError
	if !errors.As(err, &cmdErr) || !strings.Contains(cmdErr.Command, "set port gone tag=5") || !strings.Contains(cmdErr.Output, "ovs-vsctl: ") {
		t.Fatalf("ovs-vsctl error: %v, want a CommandError naming the command and ovs-vsctl's message", err)
	}
	t.Logf("as a user sees it: %v", err)
	// A list whose cookie is not metalwire's is refused before anything runs.
	err = sess.Apply(ctx, fabric.Batch{{Op: fabric.OpEnsureACL, ACL: fabric.ACL{Name: "a1", Port: "p1", Cookie: 0x1}}})
	if err == nil || !strings.Contains(err.Error(), "not metalwire's") {
		t.Fatalf("ensure-acl of cookie 0x1: %v, want a refusal", err)
	}
}

// Access lists and port state with ovs-ofctl in the same SSH session, with real traffic.
func TestACLsAndPortStateOverSSH(t *testing.T) {
	f := ovstest.NewACLFabric(t)
	srv := ovstest.StartSSHD(t, map[string]string{"OVS_RUNDIR": f.Switch.Dir})
	ep := fabric.Endpoint{Switch: "leaf1", Address: srv.Host, Port: srv.Port, HostKey: srv.HostKey, Bridge: f.Bridge,
		Credentials: fabric.Credentials{Username: srv.User, Password: srv.Password}}
	ovstest.RunACLScenario(t, f, openvswitchssh.New(), ep)
}

// A bond's list matches every member, and a bond shut is every member shut, over SSH.
func TestBondACLAndPortStateOverSSH(t *testing.T) {
	f := ovstest.NewLAGFabric(t, true)
	srv := ovstest.StartSSHD(t, map[string]string{"OVS_RUNDIR": f.Switch.Dir})
	ep := fabric.Endpoint{Switch: "leaf1", Address: srv.Host, Port: srv.Port, HostKey: srv.HostKey, Bridge: f.Bridge,
		Credentials: fabric.Credentials{Username: srv.User, Password: srv.Password}}
	ovstest.RunBondACLScenario(t, f, openvswitchssh.New(), ep)
}

// Two hosts bonded on their side negotiate LACP with the bonds ovs-vsctl makes over SSH.
func TestLACPBondsOverSSH(t *testing.T) {
	f := ovstest.NewLAGFabric(t, true)
	srv := ovstest.StartSSHD(t, map[string]string{"OVS_RUNDIR": f.Switch.Dir})
	ep := fabric.Endpoint{Switch: "leaf1", Address: srv.Host, Port: srv.Port, HostKey: srv.HostKey, Bridge: f.Bridge,
		Credentials: fabric.Credentials{Username: srv.User, Password: srv.Password}}
	ovstest.RunLAGScenario(t, f, openvswitchssh.New(), ep)
}
