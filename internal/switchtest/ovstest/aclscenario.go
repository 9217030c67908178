package ovstest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// ACLFabric is the Fabric of RunScenario with the bridge's OpenFlow management socket open to
// the drivers (and to an SSH user running ovs-ofctl), and every host's card MAC known.
type ACLFabric struct {
	*Fabric
	// MACs of the hosts' cards by host name (h1...h4).
	MACs map[string]string
}

// NewACLFabric starts the fabric with ovs-vswitchd and waits for its bridge's OpenFlow socket.
func NewACLFabric(t testing.TB) *ACLFabric {
	t.Helper()
	Require(t, "ovs-ofctl", "ethtool")
	f := &ACLFabric{Fabric: NewFabric(t), MACs: map[string]string{}}
	f.Switch.OpenMgmt(t, f.Bridge)
	for _, h := range []*Host{f.H1, f.H2, f.H3, f.H4} {
		f.MACs[h.Name] = h.MAC(t)
	}
	return f
}

// OpenMgmt waits for the bridge's OpenFlow management socket and lets any local user reach it,
// as an SSH user running ovs-ofctl on the switch must (the test's sshd user is not root).
func (s *Switch) OpenMgmt(t testing.TB, bridge string) {
	t.Helper()
	s.WaitMgmt(t, bridge)
	if err := os.Chmod(filepath.Join(s.Dir, bridge+".mgmt"), 0o666); err != nil { //nolint:gosec // a test switch: the SSH test user runs ovs-ofctl against it
		t.Fatal(err)
	}
}

// MAC is the host's card's MAC address, as ip shows it.
func (h *Host) MAC(t testing.TB) string {
	t.Helper()
	f := strings.Fields(run(t, nil, "ip", "-n", h.Namespace, "-br", "link", "show", "eth0"))
	if len(f) < 3 {
		t.Fatalf("no MAC for %s's eth0 in %v", h.Name, f)
	}
	return f[2]
}

// Passer runs one pass of the fabric controller over a driver: Read what the switch has of the
// wanted and recorded ports, bonds and lists, Diff, Apply. It returns the batch and how many
// changes the session sent.
type Passer struct {
	T   *testing.T
	Ctx context.Context
	Drv fabric.Driver
	EP  fabric.Endpoint
	// Rec is what the last pass configured (fabric.RecordOf of its want).
	Rec fabric.Record
}

// Pass takes the switch to want and returns the batch sent and the session's Changes().
func (p *Passer) Pass(want fabric.State) (fabric.Batch, int) {
	t := p.T
	t.Helper()
	sess, err := p.Drv.Connect(p.Ctx, p.EP)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer func() { _ = sess.Close() }()
	var names []string
	for n := range want.Ports {
		names = append(names, n)
	}
	for n := range want.LAGs {
		names = append(names, n)
	}
	for n := range want.ACLs {
		names = append(names, n)
	}
	names = append(append(append(names, p.Rec.Ports...), p.Rec.LAGs...), p.Rec.ACLs...)
	slices.Sort(names)
	have, err := sess.Read(p.Ctx, slices.Compact(names))
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	b := fabric.Diff(want, have, p.Rec, IdleVLAN)
	if err := sess.Apply(p.Ctx, b); err != nil {
		t.Fatalf("apply %v: %v", b, err)
	}
	p.Rec = fabric.RecordOf(want)
	return b, sess.(Changer).Changes()
}

// Read reads the named ports, bonds and lists in a session of their own.
func (p *Passer) Read(names ...string) fabric.State {
	p.T.Helper()
	sess, err := p.Drv.Connect(p.Ctx, p.EP)
	if err != nil {
		p.T.Fatalf("connect: %v", err)
	}
	defer func() { _ = sess.Close() }()
	st, err := sess.Read(p.Ctx, names)
	if err != nil {
		p.T.Fatalf("read %v: %v", names, err)
	}
	return st
}

// handFlow is a flow a person added to the bridge: metalwire must never touch it.
const handCookie = 0x1234

// RunACLScenario drives access lists and port state through a driver as the fabric controller
// does (Read, Diff, Apply per pass), and checks what a user would notice: TCP to port 22 denied
// where a list says so while ping and port 80 pass, in the direction and VLAN the list names; a
// second pass sends nothing; a hand-written flow survives every pass; a host leaving removes
// exactly its list's flows; a port shut reaches nobody and reads as down, and reaches again when
// up.
func RunACLScenario(t *testing.T, f *ACLFabric, drv fabric.Driver, ep fabric.Endpoint) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sw := f.Switch
	p := &Passer{T: t, Ctx: ctx, Drv: drv, EP: ep}
	sw.Ofctl(t, "add-flow", f.Bridge, fmt.Sprintf("cookie=%#x,priority=100,icmp,nw_src=203.0.113.9,actions=NORMAL", handCookie))
	for _, l := range []struct {
		h    *Host
		port int
	}{{f.H1, 22}, {f.H2, 22}, {f.H2, 80}, {f.H3, 22}, {f.H3, 80}, {f.H4, 22}} {
		ListenTCP(t, l.h, l.port)
	}

	denySSH := func(dir string) []fabric.ACLRule {
		return []fabric.ACLRule{{Direction: dir, Protocol: "ssh", Action: fabric.ActionDeny}, {Direction: dir, Protocol: "all", Action: fabric.ActionAllow}}
	}
	acl := func(host, network, mac string, rules []fabric.ACLRule) *fabric.ACLWant {
		return &fabric.ACLWant{Name: fabric.ACLName(host, network), Cookie: fabric.ACLCookie(host, network), HostMAC: mac, Rules: rules}
	}
	// h1, h2, h3 in 1001, h4 in 1002, the trunk host in both. h1's list stops what h1 sends to
	// port 22 (ingress); h3's what is sent to h3's port 22 (egress); the trunk host's list of
	// network 1002 stops what it sends to port 22 in VLAN 1002 only.
	h1 := fabric.PortWant{Switch: "s", Port: f.H1.Port, Mode: fabric.ModeAccess, VLAN: 1001, ACL: acl("h1", "control", f.MACs["h1"], denySSH(fabric.DirectionIngress))}
	h2 := fabric.PortWant{Switch: "s", Port: f.H2.Port, Mode: fabric.ModeAccess, VLAN: 1001}
	h3 := fabric.PortWant{Switch: "s", Port: f.H3.Port, Mode: fabric.ModeAccess, VLAN: 1001, ACL: acl("h3", "control", f.MACs["h3"], denySSH(fabric.DirectionEgress))}
	h4 := fabric.PortWant{Switch: "s", Port: f.H4.Port, Mode: fabric.ModeAccess, VLAN: 1002}
	trunkHostMAC := "02:00:5e:00:53:99" // the trunk host's card: egress rules only, none here
	tr1 := fabric.PortWant{Switch: "s", Port: f.Trunk.Port, Mode: fabric.ModeTrunk, VLAN: 1001}
	tr2 := fabric.PortWant{Switch: "s", Port: f.Trunk.Port, Mode: fabric.ModeTrunk, VLAN: 1002, ACL: acl("trk", "storage", trunkHostMAC, denySSH(fabric.DirectionIngress))}
	desired := func(wants ...fabric.PortWant) fabric.State { return fabric.Desired(wants)["s"] }
	all := desired(h1, h2, h3, h4, tr1, tr2)
	lists := []string{h1.ACL.Name, h3.ACL.Name, tr2.ACL.Name}

	b, _ := p.Pass(all)
	if n := countOps(b, fabric.OpEnsureACL); n != 3 {
		t.Fatalf("first pass: %d ensure-acl, want 3:\n%v", n, b)
	}
	dump := sw.Ofctl(t, "dump-flows", f.Bridge)
	for _, name := range lists {
		a := all.ACLs[name]
		want, _ := a.FlowsOf()
		if n := strings.Count(dump, fmt.Sprintf("cookie=%#x,", a.Cookie)); n != len(want) {
			t.Fatalf("dump-flows shows %d flows of %s (cookie %#x), want %d:\n%s", n, name, a.Cookie, len(want), dump)
		}
	}
	trunkFlows := flowLines(dump, all.ACLs[tr2.ACL.Name].Cookie)
	for _, l := range trunkFlows {
		if !strings.Contains(l, "dl_vlan=1002") {
			t.Errorf("a flow of the trunk's list does not match VLAN 1002 alone: %s", l)
		}
	}

	expectTCP(t, f.H1, f.H2, 22, false) // h1's ingress list
	expectTCP(t, f.H1, f.H2, 80, true)
	expectReach(t, f.H1, f.H2, true)
	expectTCP(t, f.H2, f.H1, 22, true)  // h1's list is about what h1 sends
	expectTCP(t, f.H2, f.H3, 22, false) // h3's egress list
	expectTCP(t, f.H2, f.H3, 80, true)
	expectReach(t, f.H2, f.H3, true)
	expectTCP(t, f.Trunk.VLANs[1002], f.H4, 22, false) // the trunk's list, VLAN 1002
	expectReach(t, f.Trunk.VLANs[1002], f.H4, true)
	expectTCP(t, f.Trunk.VLANs[1001], f.H2, 22, true) // VLAN 1001 on the same port: not the list's

	// A second pass sends nothing: Read gives back what Diff compares equal.
	versions, flows := sw.PortVersions(t), sw.Ofctl(t, "dump-flows", "--no-stats", f.Bridge)
	if b, n := p.Pass(all); len(b) != 0 || n != 0 {
		t.Fatalf("second pass: batch %v, %d changes sent; want nothing", b, n)
	}
	if after := sw.Ofctl(t, "dump-flows", "--no-stats", f.Bridge); after != flows || !reflect.DeepEqual(sw.PortVersions(t), versions) {
		t.Fatalf("an unchanged pass changed the switch:\nflows before\n%s\nafter\n%s", flows, after)
	}

	// The list changes (h1 may reach port 22 now, but not port 80): replaced whole, in one pass.
	h1.ACL = acl("h1", "control", f.MACs["h1"], []fabric.ACLRule{{Direction: fabric.DirectionIngress, Protocol: "http", Action: fabric.ActionDeny}})
	all = desired(h1, h2, h3, h4, tr1, tr2)
	if b, _ := p.Pass(all); len(b) != 1 || b[0].Op != fabric.OpEnsureACL {
		t.Fatalf("a changed list: batch %v, want one ensure-acl", b)
	}
	newFlows, _ := all.ACLs[h1.ACL.Name].FlowsOf()
	if got := flowLines(sw.Ofctl(t, "dump-flows", f.Bridge), h1.ACL.Cookie); len(got) != len(newFlows) {
		t.Fatalf("after the change %d flows of h1's list, want %d:\n%s", len(got), len(newFlows), strings.Join(got, "\n"))
	}
	expectTCP(t, f.H1, f.H2, 22, true)
	expectTCP(t, f.H1, f.H2, 80, false)

	// Port status down fences h2: it reaches nobody, reads as down; up again, it reaches.
	h2.Down = true
	if b, _ := p.Pass(desired(h1, h2, h3, h4, tr1, tr2)); len(b) != 1 || !b[0].Port.Down {
		t.Fatalf("shutting h2: batch %v, want one port change with down", b)
	}
	if st := p.Read(f.H2.Port, f.H1.Port); !st.Ports[f.H2.Port].Down || st.Ports[f.H1.Port].Down {
		t.Fatalf("read after shutting h2: %+v; want h2's port down, h1's up", st.Ports)
	}
	expectReach(t, f.H2, f.H1, false)
	expectReach(t, f.H3, f.H2, false)
	if b, n := p.Pass(desired(h1, h2, h3, h4, tr1, tr2)); len(b) != 0 || n != 0 {
		t.Fatalf("second pass with h2 down: batch %v, %d sent; want nothing", b, n)
	}
	h2.Down = false
	if b, _ := p.Pass(desired(h1, h2, h3, h4, tr1, tr2)); len(b) != 1 {
		t.Fatalf("h2 up again: batch %v, want one port change", b)
	}
	if st := p.Read(f.H2.Port); st.Ports[f.H2.Port].Down {
		t.Fatalf("read after h2 up: %+v, want up", st.Ports[f.H2.Port])
	}
	expectReach(t, f.H2, f.H1, true)

	// h1 leaves: exactly its list's flows go, the others' and the hand-written one stay.
	before := sw.Ofctl(t, "dump-flows", f.Bridge)
	b, _ = p.Pass(desired(h2, h3, h4, tr1, tr2))
	if countOps(b, fabric.OpRemoveACL) != 1 || countOps(b, fabric.OpResetPort) != 1 {
		t.Fatalf("h1 leaving: batch %v, want remove-acl and reset-port", b)
	}
	afterLeave := sw.Ofctl(t, "dump-flows", f.Bridge)
	if n := len(flowLines(afterLeave, h1.ACL.Cookie)); n != 0 {
		t.Fatalf("%d flows of h1's list remain after it left:\n%s", n, afterLeave)
	}
	for _, c := range []uint64{h3.ACL.Cookie, tr2.ACL.Cookie, handCookie} {
		if got, was := len(flowLines(afterLeave, c)), len(flowLines(before, c)); got != was || got == 0 {
			t.Fatalf("flows of cookie %#x: %d after h1 left, %d before; want them untouched:\n%s", c, got, was, afterLeave)
		}
	}
	expectTCP(t, f.H3, f.H2, 22, true) // h3 sends freely: its list is egress

	// Everyone leaves: no metalwire flow remains, the hand-written one does, every port is up.
	p.Pass(fabric.State{})
	final := sw.Ofctl(t, "dump-flows", f.Bridge)
	if strings.Contains(final, "cookie=0x6d77") || len(flowLines(final, handCookie)) != 1 {
		t.Fatalf("after everyone left: want no metalwire flow and the hand-written one:\n%s", final)
	}
	if b, n := p.Pass(fabric.State{}); len(b) != 0 || n != 0 {
		t.Fatalf("a pass after everyone left: batch %v, %d sent; want nothing", b, n)
	}
}

func countOps(b fabric.Batch, op fabric.Op) int {
	n := 0
	for _, c := range b {
		if c.Op == op {
			n++
		}
	}
	return n
}

// flowLines are the lines of an ovs-ofctl dump-flows output whose cookie is c.
func flowLines(dump string, c uint64) []string {
	var out []string
	for _, l := range strings.Split(dump, "\n") {
		if strings.Contains(l, fmt.Sprintf("cookie=%#x,", c)) {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

func expectTCP(t *testing.T, from, to *Host, port int, want bool) {
	t.Helper()
	tries := 2
	if want {
		tries = 10
	}
	if got := ConnectsTCP(t, from, to.Addr, port, tries); got != want {
		verb := "cannot connect"
		if got {
			verb = "connects"
		}
		t.Fatalf("%s (%s) %s to %s (%s) port %d; want the opposite", from.Name, from.Addr, verb, to.Name, to.Addr, port)
	}
}
