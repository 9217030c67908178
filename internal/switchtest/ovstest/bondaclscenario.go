package ovstest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// RunBondACLScenario binds an access list to a host's LACP bond and shuts and opens the bond,
// through a driver as the fabric controller does (Read, Diff, Apply per pass), and checks what a
// user would notice: the list matches frames of every member (TCP to port 22 stays denied when
// the member carrying it goes down), a second pass sends nothing, a shut bond reaches nobody and
// reads as down, and the host leaving takes the list's flows away and leaves its ports up.
func RunBondACLScenario(t *testing.T, f *LAGFabric, drv fabric.Driver, ep fabric.Endpoint) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sw := f.Switch
	sw.OpenMgmt(t, f.Bridge)
	p := &Passer{T: t, Ctx: ctx, Drv: drv, EP: ep}
	ListenTCP(t, f.B2.Host, 22)
	ListenTCP(t, f.B2.Host, 80)

	rules := []fabric.ACLRule{{Direction: fabric.DirectionIngress, Protocol: "ssh", Action: fabric.ActionDeny}, {Direction: fabric.DirectionIngress, Protocol: "all", Action: fabric.ActionAllow}}
	wants := func(b1Down bool, withB1 bool) fabric.State {
		var w []fabric.PortWant
		for _, h := range []*BondedHost{f.B1, f.B2} {
			if h == f.B1 && !withB1 {
				continue
			}
			lag := &fabric.LAGWant{Name: fabric.LAGName(h.Name, "control"), LACP: true, FastRate: true}
			for i, port := range h.Ports {
				pw := fabric.PortWant{Switch: "s", Port: port, Mode: fabric.ModeAccess, VLAN: 1001, LAG: lag}
				if h == f.B1 {
					pw.Down = b1Down
					pw.ACL = &fabric.ACLWant{Name: fabric.ACLName(h.Name, "control"), Cookie: fabric.ACLCookie(h.Name, "control"), HostMAC: h.MACs[i], Rules: rules}
				}
				w = append(w, pw)
			}
		}
		return fabric.Desired(w)["s"]
	}
	cookie := fabric.ACLCookie(f.B1.Name, "control")
	b1Bond, b2Bond := fabric.LAGName(f.B1.Name, "control"), fabric.LAGName(f.B2.Name, "control")

	b, _ := p.Pass(wants(false, true))
	if countOps(b, fabric.OpEnsureLAG) != 2 || countOps(b, fabric.OpEnsureACL) != 1 {
		t.Fatalf("first pass: %v; want two bonds and one list", b)
	}
	lines := flowLines(sw.Ofctl(t, "dump-flows", "--names", f.Bridge), cookie)
	for _, port := range f.B1.Ports {
		n := 0
		for _, l := range lines {
			if strings.Contains(l, "in_port="+port+",") || strings.Contains(l, "in_port="+port+" ") || strings.Contains(l, `in_port="`+port+`"`) {
				n++
			}
		}
		if n != len(rules)+1+1 { // ssh (IPv4 and IPv6), all, the default
			t.Errorf("member %s: %d flows of the bond's list match it, want %d:\n%s", port, n, len(rules)+1+1, strings.Join(lines, "\n"))
		}
	}
	for _, l := range []string{b1Bond, b2Bond} {
		sw.WaitAppctl(t, 30*time.Second, []string{"status: active negotiated"}, "lacp/show", l)
	}
	expectTCP(t, f.B1.Host, f.B2.Host, 22, false)
	expectTCP(t, f.B1.Host, f.B2.Host, 80, true)

	// Each member alone: the list holds on either.
	for i := range f.B1.Cards {
		f.B1.SetCardDown(t, sw, i, true)
		sw.WaitAppctl(t, 30*time.Second, []string{"member " + f.B1.Ports[i] + ": disabled"}, "bond/show", b1Bond)
		expectTCP(t, f.B1.Host, f.B2.Host, 80, true)
		expectTCP(t, f.B1.Host, f.B2.Host, 22, false)
		f.B1.SetCardDown(t, sw, i, false)
		sw.WaitAppctl(t, 30*time.Second, []string{"member " + f.B1.Ports[i] + ": enabled"}, "bond/show", b1Bond)
	}
	if b, n := p.Pass(wants(false, true)); len(b) != 0 || n != 0 {
		t.Fatalf("second pass: batch %v, %d sent; want nothing", b, n)
	}

	// The bond shut: every member down, the host reaches nobody; opened again, it does.
	if b, _ := p.Pass(wants(true, true)); len(b) != 1 || b[0].Op != fabric.OpEnsureLAG || !b[0].LAG.Port.Down {
		t.Fatalf("shutting the bond: batch %v, want one ensure-lag with the bond down", b)
	}
	if st := p.Read(b1Bond, b2Bond); !st.LAGs[b1Bond].Port.Down || st.LAGs[b2Bond].Port.Down {
		t.Fatalf("read after shutting b1's bond: %+v; want b1's down, b2's up", st.LAGs)
	}
	show := sw.Ofctl(t, "show", f.Bridge)
	for _, port := range f.B1.Ports {
		if !portDownIn(show, port) {
			t.Errorf("ovs-ofctl show: member %s is not PORT_DOWN:\n%s", port, show)
		}
	}
	expectReach(t, f.B2.Host, f.B1.Host, false)
	if b, n := p.Pass(wants(true, true)); len(b) != 0 || n != 0 {
		t.Fatalf("second pass with the bond down: batch %v, %d sent; want nothing", b, n)
	}
	p.Pass(wants(false, true))
	sw.WaitAppctl(t, 30*time.Second, []string{"status: active negotiated"}, "lacp/show", b1Bond)
	expectReach(t, f.B2.Host, f.B1.Host, true)

	// b1 shut and then leaving: its list's flows go, its ports come back idle and up.
	p.Pass(wants(true, true))
	b, _ = p.Pass(wants(false, false))
	if countOps(b, fabric.OpRemoveACL) != 1 || countOps(b, fabric.OpRemoveLAG) != 1 {
		t.Fatalf("b1 leaving: %v; want remove-acl and remove-lag", b)
	}
	if n := len(flowLines(sw.Ofctl(t, "dump-flows", f.Bridge), cookie)); n != 0 {
		t.Fatalf("%d flows of b1's list remain after it left", n)
	}
	st := p.Read(slices.Clone(f.B1.Ports)...)
	for _, port := range f.B1.Ports {
		if got := st.Ports[port]; got.Down || got.VLAN != IdleVLAN {
			t.Errorf("after b1 left, port %s reads %+v; want up in the idle VLAN", port, got)
		}
	}
	if b, n := p.Pass(wants(false, false)); len(b) != 0 || n != 0 {
		t.Fatalf("a pass after b1 left: batch %v, %d sent; want nothing", b, n)
	}
}

// portDownIn says whether ovs-ofctl show lists port with PORT_DOWN in its config line.
func portDownIn(show, port string) bool {
	_, rest, ok := strings.Cut(show, fmt.Sprintf("(%s): ", port))
	if !ok {
		return false
	}
	for _, l := range strings.Split(rest, "\n")[1:] {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "config:") {
			return strings.Contains(l, "PORT_DOWN")
		}
	}
	return false
}
