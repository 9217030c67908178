package ovstest

import (
	"strings"
	"testing"
)

// A fleet with ovs-vswitchd has ports OpenFlow can address with no device behind them: each
// has a port number, a flow may match it by name, a port-mod shuts it, and DumpFlows reads the
// flows of a cookie back by port name.
func TestFleetWithVSwitchdHasOpenFlowPorts(t *testing.T) {
	f := StartFleetWith(t, 2, 3, FleetOptions{VSwitchd: true})
	s, br := f.Switches[1], f.Bridges[1]
	if s.Namespace != "" {
		t.Fatalf("a fleet's switch has the named namespace %q; want none (nothing may outlive the test)", s.Namespace)
	}
	show := s.Ofctl(t, "show", s.MgmtRemote(br))
	for _, p := range f.Ports[1] {
		if !strings.Contains(show, "("+p+")") {
			t.Fatalf("ovs-ofctl show lists no OpenFlow port %s:\n%s", p, show)
		}
	}
	const cookie = 0x6d77000000000042
	s.Ofctl(t, "add-flow", s.MgmtRemote(br), "cookie=0x6d77000000000042,priority=300,in_port=p0002,tcp,tp_dst=22,actions=drop")
	s.Ofctl(t, "add-flow", s.MgmtRemote(br), "cookie=0x1,priority=10,actions=NORMAL")
	flows := s.DumpFlows(t, br, cookie, ^uint64(0))
	if len(flows) != 1 {
		t.Fatalf("DumpFlows of cookie %#x: %+v; want the one flow added", uint64(cookie), flows)
	}
	if fl := flows[0]; fl.InPort != "p0002" || fl.Actions != "drop" || fl.Cookie != cookie {
		t.Fatalf("flow read back as %+v; want in_port p0002, drop, cookie %#x", fl, uint64(cookie))
	}
	if port, _ := flows[0].Field("tp_dst"); port != "22" {
		t.Fatalf("flow %+v: tp_dst %q, want 22", flows[0], port)
	}
	s.Ofctl(t, "mod-port", s.MgmtRemote(br), "p0003", "down")
	waitFor(t, "p0003 admin_state down", func() bool {
		return strings.TrimSpace(s.Vsctl(t, "get", "interface", "p0003", "admin_state")) == "down"
	})
	if other := f.Switches[0].DumpFlows(t, f.Bridges[0], cookie, ^uint64(0)); len(other) != 0 {
		t.Fatalf("the other switch has the flows too: %+v", other)
	}
}
