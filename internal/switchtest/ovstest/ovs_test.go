package ovstest

import "testing"

// The harness itself: two hosts in one VLAN reach each other, a host in another VLAN does not.
func TestSwitchForwardsByVLAN(t *testing.T) {
	s := StartSwitch(t, Options{VSwitchd: true})
	br := s.AddBridge(t, "br0")
	h1 := s.AttachHost(t, br, "h1", "198.51.100.1", 24, 10)
	h2 := s.AttachHost(t, br, "h2", "198.51.100.2", 24, 10)
	h3 := s.AttachHost(t, br, "h3", "198.51.100.3", 24, 20)
	if !Reaches(t, h1, h2.Addr, 5) {
		t.Fatalf("h1 cannot reach h2 in the same VLAN")
	}
	if Reaches(t, h1, h3.Addr, 2) {
		t.Fatalf("h1 reaches h3 in another VLAN")
	}
	if got := s.Ports(t)[h3.Port]; got.Tag != 20 {
		t.Fatalf("port %s: tag %d, want 20", h3.Port, got.Tag)
	}
	if len(s.PortVersions(t)) != 4 {
		t.Fatalf("want 4 port rows (bridge port + 3 hosts): %v", s.PortVersions(t))
	}
}
