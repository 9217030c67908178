package openflow_test

import (
	"cmp"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/metalwire/metalwire/internal/switchdriver/openflow"
	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// bench is a user-space Open vSwitch bridge with two hosts cabled to it, and the bridge's
// OpenFlow management socket.
type bench struct {
	sw     *ovstest.Switch
	bridge string
	h1, h2 *ovstest.Host
	// mac2 is h2's card's MAC.
	mac2 string
}

func newBench(t *testing.T) *bench {
	t.Helper()
	ovstest.Require(t, "ovs-ofctl")
	sw := ovstest.StartSwitch(t, ovstest.Options{VSwitchd: true})
	b := &bench{sw: sw, bridge: sw.AddBridge(t, "br0"), mac2: "02:00:5e:00:53:02"}
	b.h1 = sw.AttachHost(t, b.bridge, "h1", "198.51.100.1", 24, 0)
	b.h2 = sw.AttachHost(t, b.bridge, "h2", "198.51.100.2", 24, 0)
	if out, err := exec.Command("ip", "-n", b.h2.Namespace, "link", "set", "eth0", "address", b.mac2).CombinedOutput(); err != nil {
		t.Fatalf("set h2's MAC: %v\n%s", err, out)
	}
	sw.WaitMgmt(t, b.bridge)
	return b
}

func (b *bench) dial(ctx context.Context, t *testing.T) *openflow.Conn {
	t.Helper()
	c, err := openflow.Dial(ctx, b.sw.MgmtRemote(b.bridge))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func (b *bench) dumpFlows(t *testing.T) string {
	t.Helper()
	return b.sw.Ofctl(t, "dump-flows", b.bridge)
}

func countCookie(dump string, cookie uint64) int {
	return strings.Count(dump, fmt.Sprintf("cookie=%#x,", cookie))
}

func byPriority(a, b fabric.Flow) int {
	return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.OfctlSpec(), b.OfctlSpec()))
}

// TestACLFlows applies an access list (deny ssh to h2, then allow all, and rules with remotes
// of both families) through the client and checks it where a user would: ovs-ofctl shows the
// flows with their cookie, they read back exactly, ssh to h2 is blocked while HTTP and ping
// pass; an unchanged pass sends nothing, a changed ACL replaces its flows (ssh passes again),
// and removing the cookie removes exactly them, leaving a hand-written flow alone.
func TestACLFlows(t *testing.T) {
	b := newBench(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	const handCookie = 0x1234
	b.sw.Ofctl(t, "add-flow", b.bridge, fmt.Sprintf("cookie=%#x,priority=100,icmp,nw_src=203.0.113.9,actions=NORMAL", handCookie))
	ovstest.ListenTCP(t, b.h2, 22)
	ovstest.ListenTCP(t, b.h2, 80)
	if !ovstest.ConnectsTCP(t, b.h1, b.h2.Addr, 22, 10) {
		t.Fatal("before any ACL, h1 cannot reach h2's port 22: the bench is broken")
	}

	cookie := fabric.ACLCookie("h2", "provisioning")
	want, err := fabric.ACLFlows(fabric.PortACL{
		Port: b.h2.Port, HostMACs: []string{strings.ToUpper(b.mac2)}, Cookie: cookie,
		Rules: []fabric.ACLRule{
			{Direction: fabric.DirectionEgress, Protocol: "ssh", Action: fabric.ActionDeny},
			{Direction: fabric.DirectionIngress, Protocol: "udp:1000-1999", Action: fabric.ActionAllow, Remote: "10.1.2.3/8"},
			{Direction: fabric.DirectionEgress, Protocol: "icmp", Action: fabric.ActionAllow, Remote: "2001:DB8::/32"},
			{Direction: fabric.DirectionEgress, Protocol: "all", Action: fabric.ActionAllow},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := b.dial(ctx, t)
	if err := c.Apply(ctx, want, nil); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if c.Changes() != len(want) {
		t.Errorf("Changes() = %d after adding %d flows", c.Changes(), len(want))
	}

	dump := b.dumpFlows(t)
	if n := countCookie(dump, cookie); n != len(want) {
		t.Fatalf("ovs-ofctl dump-flows shows %d flows with cookie %#x, want %d:\n%s", n, cookie, len(want), dump)
	}
	if !strings.Contains(dump, "tp_dst=22") || !strings.Contains(dump, "dl_dst="+b.mac2) {
		t.Errorf("dump-flows lacks the ssh deny on h2's MAC:\n%s", dump)
	}
	normalized := make([]fabric.Flow, len(want))
	for i, f := range want {
		normalized[i] = openflow.Normalize(f)
	}
	slices.SortFunc(normalized, byPriority)
	for _, sel := range []struct{ cookie, mask uint64 }{{cookie, ^uint64(0)}, {fabric.CookiePrefix, fabric.CookiePrefixMask}} {
		got, err := c.Flows(ctx, sel.cookie, sel.mask)
		if err != nil {
			t.Fatalf("flows %#x/%#x: %v", sel.cookie, sel.mask, err)
		}
		if diff := gocmp.Diff(normalized, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("flows %#x/%#x read back differ from those applied (-applied +read):\n%s", sel.cookie, sel.mask, diff)
		}
	}

	if ovstest.ConnectsTCP(t, b.h1, b.h2.Addr, 22, 2) {
		t.Error("with deny ssh, h1 still connects to h2's port 22")
	}
	if !ovstest.ConnectsTCP(t, b.h1, b.h2.Addr, 80, 10) {
		t.Error("with allow all after deny ssh, h1 cannot connect to h2's port 80")
	}
	if !ovstest.Reaches(t, b.h1, b.h2.Addr, 10) {
		t.Error("with allow all after deny ssh, h1 cannot ping h2")
	}

	// Applying again in one bundle (remove the cookie, add its flows) leaves exactly one copy.
	if err := c.Apply(ctx, want, []uint64{cookie}); err != nil {
		t.Fatalf("apply again: %v", err)
	}
	if n := countCookie(b.dumpFlows(t), cookie); n != len(want) {
		t.Errorf("after a second apply, %d flows carry the cookie, want %d", n, len(want))
	}

	// In step, Plan finds nothing to do, and nothing is sent.
	current, err := c.Flows(ctx, fabric.CookiePrefix, fabric.CookiePrefixMask)
	if err != nil {
		t.Fatal(err)
	}
	add, remove := openflow.Plan(want, current)
	before := c.Changes()
	if err := c.Apply(ctx, add, remove); err != nil || len(add)+len(remove) > 0 || c.Changes() != before {
		t.Errorf("an unchanged pass planned add %v remove %#x and sent %d changes (%v); want nothing", add, remove, c.Changes()-before, err)
	}

	// The ACL changes (ssh allowed now): Plan replaces the cookie's flows in one bundle.
	changed, err := fabric.ACLFlows(fabric.PortACL{Port: b.h2.Port, HostMACs: []string{b.mac2}, Cookie: cookie,
		Rules: []fabric.ACLRule{{Direction: fabric.DirectionEgress, Protocol: "http", Action: fabric.ActionAllow}}})
	if err != nil {
		t.Fatal(err)
	}
	add, remove = openflow.Plan(changed, current)
	if !slices.Equal(remove, []uint64{cookie}) || len(add) != len(changed) {
		t.Fatalf("Plan for a changed ACL = add %d flows, remove %#x; want its %d flows for cookie %#x", len(add), remove, len(changed), cookie)
	}
	if err := c.Apply(ctx, add, remove); err != nil {
		t.Fatalf("apply the change: %v", err)
	}
	if got, err := c.Flows(ctx, cookie, ^uint64(0)); err != nil || len(got) != len(changed) {
		t.Errorf("after the change, Flows = %v, %v; want the %d new flows only", got, err, len(changed))
	}
	if !ovstest.ConnectsTCP(t, b.h1, b.h2.Addr, 22, 10) {
		t.Error("with ssh no longer denied, h1 cannot connect to h2's port 22")
	}

	// Removing the cookie removes exactly its flows.
	if err := c.Apply(ctx, nil, []uint64{cookie}); err != nil {
		t.Fatalf("remove: %v", err)
	}
	dump = b.dumpFlows(t)
	if n := countCookie(dump, cookie); n != 0 {
		t.Errorf("after removing the cookie, %d of its flows remain:\n%s", n, dump)
	}
	if countCookie(dump, handCookie) != 1 || !strings.Contains(dump, "priority=0 actions=NORMAL") {
		t.Errorf("the hand-written flow or the bridge's NORMAL flow did not survive:\n%s", dump)
	}
	if got, err := c.Flows(ctx, fabric.CookiePrefix, fabric.CookiePrefixMask); err != nil || len(got) != 0 {
		t.Errorf("after removal, Flows = %v, %v; want none", got, err)
	}
}

// TestApplyRefusesBeforeSending: a flow naming a port the bridge lacks is refused before anything is
// sent, and a cookie that is not metalwire's is never deleted.
func TestApplyRefusesBeforeSending(t *testing.T) {
	b := newBench(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := b.dial(ctx, t)
	cookie := fabric.ACLCookie("h1", "net")
	good := fabric.Flow{Cookie: cookie, Priority: 30000, InPort: b.h1.Port}
	bad := fabric.Flow{Cookie: cookie, Priority: 29999, InPort: "nosuchport"}
	err := c.Apply(ctx, []fabric.Flow{good, bad}, nil)
	if err == nil || !strings.Contains(err.Error(), `"nosuchport"`) || !strings.Contains(err.Error(), b.h1.Port) {
		t.Fatalf("apply with an unknown port: %v; want an error naming it and the bridge's ports", err)
	}
	if n := countCookie(b.dumpFlows(t), cookie); n != 0 {
		t.Errorf("a refused apply wrote %d flows", n)
	}

	b.sw.Ofctl(t, "add-flow", b.bridge, "cookie=0x1,priority=5,in_port="+b.h1.Port+",actions=NORMAL")
	err = c.Apply(ctx, nil, []uint64{0x1})
	if err == nil || !strings.Contains(err.Error(), "not metalwire's") {
		t.Errorf("removing cookie 0x1: %v; want a refusal", err)
	}
	if n := countCookie(b.dumpFlows(t), 0x1); n != 1 {
		t.Errorf("the hand-written flow of cookie 0x1 is gone")
	}
}

// TestSetPortAdmin fences h2: with its port administratively down h1 cannot reach it and
// Ports reports it; up again, it can.
func TestSetPortAdmin(t *testing.T) {
	b := newBench(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := b.dial(ctx, t)
	if !ovstest.Reaches(t, b.h1, b.h2.Addr, 10) {
		t.Fatal("before any change h1 cannot ping h2: the bench is broken")
	}
	ports, err := c.Ports(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p2, ok := ports[b.h2.Port]
	if !ok || p2.AdminDown || p2.Number == 0 || len(p2.HWAddr) != 6 {
		t.Fatalf("Ports()[%q] = %+v, %v; want an up port with a number and a MAC (all: %v)", b.h2.Port, p2, ok, ports)
	}
	if _, ok := ports[b.bridge]; !ok {
		t.Errorf("Ports() lacks the bridge's own port %q: %v", b.bridge, ports)
	}

	if err := c.SetPortAdmin(ctx, b.h2.Port, true); err != nil {
		t.Fatalf("set down: %v", err)
	}
	if ports, err = c.Ports(ctx); err != nil || !ports[b.h2.Port].AdminDown || ports[b.h1.Port].AdminDown {
		t.Errorf("after set down, Ports() = %v, %v; want %s alone admin down", ports, err, b.h2.Port)
	}
	if show := b.sw.Ofctl(t, "show", b.bridge); !strings.Contains(show, "PORT_DOWN") {
		t.Errorf("ovs-ofctl show does not report a port down:\n%s", show)
	}
	if ovstest.Reaches(t, b.h1, b.h2.Addr, 2) {
		t.Error("with h2's port down, h1 still reaches h2")
	}

	if err := c.SetPortAdmin(ctx, b.h2.Port, true); err != nil || c.Changes() != 1 {
		t.Errorf("set down again: %v, %d port-mods in all; want the second one not sent", err, c.Changes())
	}
	if err := c.SetPortAdmin(ctx, b.h2.Port, false); err != nil {
		t.Fatalf("set up: %v", err)
	}
	if ports, err = c.Ports(ctx); err != nil || ports[b.h2.Port].AdminDown {
		t.Errorf("after set up, Ports() = %v, %v; want %s up", ports, err, b.h2.Port)
	}
	if !ovstest.Reaches(t, b.h1, b.h2.Addr, 15) {
		t.Error("with h2's port up again, h1 cannot reach h2")
	}

	err = c.SetPortAdmin(ctx, "nosuchport", true)
	if err == nil || !strings.Contains(err.Error(), `"nosuchport"`) {
		t.Errorf("set an unknown port down: %v; want an error naming it", err)
	}
}

// TestDialTCP reaches the bridge through a passive controller listener (the remote a
// NetworkDevice names), and a bridge that does not allow OpenFlow 1.5 is refused with the fix.
func TestDialTCP(t *testing.T) {
	b := newBench(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// ovs-vswitchd runs in the switch's namespace: listen on its loopback, dial from there.
	if out, err := exec.Command("ip", "-n", b.sw.Namespace, "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("lo up: %v\n%s", err, out)
	}
	port := ovstest.FreePort(t)
	b.sw.Vsctl(t, "set-controller", b.bridge, fmt.Sprintf("ptcp:%d:127.0.0.1", port))
	remote := fmt.Sprintf("tcp:127.0.0.1:%d", port)
	var c *openflow.Conn
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := ovstest.InNamespace(b.sw.Namespace, func() (err error) {
			c, err = openflow.Dial(ctx, remote)
			return err
		})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("dial %s in the switch's namespace: %v", remote, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	defer func() { _ = c.Close() }()
	ports, err := c.Ports(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ports[b.h1.Port]; !ok {
		t.Errorf("Ports() over tcp lacks %s: %v", b.h1.Port, ports)
	}

	// One transaction: a bridge reconfigured after it is created recreates its socket.
	old := b.sw.Bridge("br13")
	b.sw.Vsctl(t, "add-br", old, "--", "set", "bridge", old, "datapath_type=netdev", "protocols=OpenFlow10,OpenFlow13")
	b.sw.WaitMgmt(t, old)
	for range 50 { // the socket file appears just before ovs-vswitchd listens on it
		if _, err = openflow.Dial(ctx, b.sw.MgmtRemote(old)); err == nil || !strings.Contains(err.Error(), "connection refused") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err == nil || !strings.Contains(err.Error(), "OpenFlow 1.5") || !strings.Contains(err.Error(), "protocols=") {
		t.Errorf("dial a bridge without OpenFlow 1.5: %v; want an error saying so and how to allow it", err)
	}
}

// TestVLANFlowsReadBack: a trunk network's list matches its VLAN (dl_vlan) on every flow, as
// ovs-ofctl shows it, and reads back exactly, so a second pass finds it in step.
func TestVLANFlowsReadBack(t *testing.T) {
	b := newBench(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cookie := fabric.ACLCookie("h2", "storage")
	want, err := fabric.ACLFlows(fabric.PortACL{Port: b.h2.Port, HostMACs: []string{b.mac2}, VLAN: 1002, Cookie: cookie,
		Rules: []fabric.ACLRule{
			{Direction: fabric.DirectionIngress, Protocol: "ssh", Action: fabric.ActionDeny},
			{Direction: fabric.DirectionEgress, Protocol: "http", Action: fabric.ActionAllow, Remote: "10.0.0.0/8"},
		}, DefaultDeny: true})
	if err != nil {
		t.Fatal(err)
	}
	c := b.dial(ctx, t)
	if err := c.Apply(ctx, want, nil); err != nil {
		t.Fatalf("apply: %v", err)
	}
	dump := b.dumpFlows(t)
	if n, v := countCookie(dump, cookie), strings.Count(dump, "dl_vlan=1002"); n != len(want) || v != len(want) {
		t.Fatalf("dump-flows shows %d flows of the cookie and %d matching dl_vlan=1002, want %d of each:\n%s", n, v, len(want), dump)
	}
	got, err := c.Flows(ctx, cookie, ^uint64(0))
	if err != nil {
		t.Fatal(err)
	}
	normalized := make([]fabric.Flow, len(want))
	for i, f := range want {
		normalized[i] = openflow.Normalize(f)
	}
	slices.SortFunc(normalized, byPriority)
	if diff := gocmp.Diff(normalized, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("VLAN flows read back differ (-applied +read):\n%s", diff)
	}
	if add, remove := openflow.Plan(want, got); len(add)+len(remove) != 0 {
		t.Errorf("Plan after apply = add %d, remove %#x; want nothing", len(add), remove)
	}
}
