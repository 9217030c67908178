package ovstest

import (
	"context"
	"fmt"
	"os/exec"
	"testing"
	"time"
)

// Host is a network namespace with one interface (eth0) cabled to a switch port.
type Host struct {
	// Name is the test's name for it ("h1").
	Name string
	// Namespace is the network namespace, unique on the machine.
	Namespace string
	// Port is the Open vSwitch port (the veth end on the switch) the host is cabled to.
	Port string
	// Addr is the host's IPv4 address (no prefix length).
	Addr string
}

// AttachHost creates a namespace with address addr/prefixLen on eth0, whose cable is a new port
// of bridge with the given tag (0: none). The namespace and veth pair go when the test ends.
func (s *Switch) AttachHost(t testing.TB, bridge, name, addr string, prefixLen, tag int) *Host {
	t.Helper()
	h := &Host{Name: name, Namespace: s.prefix + "-" + name, Port: s.prefix + name, Addr: addr}
	peer := h.Port + "p"
	if len(peer) > 15 {
		t.Fatalf("host name %q too long for an interface name", name)
	}
	ip(t, "netns", "add", h.Namespace)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", h.Namespace).Run() })
	s.addCable(t, h.Port, peer)
	ip(t, "link", "set", peer, "netns", h.Namespace)
	ip(t, "-n", h.Namespace, "link", "set", peer, "name", "eth0")
	ip(t, "-n", h.Namespace, "addr", "add", fmt.Sprintf("%s/%d", addr, prefixLen), "dev", "eth0")
	ip(t, "-n", h.Namespace, "link", "set", "eth0", "up")
	ip(t, "-n", h.Namespace, "link", "set", "lo", "up")
	args := []string{"add-port", bridge, h.Port}
	if tag > 0 {
		args = append(args, fmt.Sprintf("tag=%d", tag))
	}
	s.Vsctl(t, args...)
	return h
}

// TrunkHost stands in for a VLAN-aware host (this kernel has no 8021q): its NIC is a veth from
// the switch's Port into a bridge of its own, which hands each VLAN to a namespace of its own.
type TrunkHost struct {
	// Port is the switch port the host's NIC is cabled to.
	Port string
	// VLANs maps a VLAN to the namespace that sends and receives it on the host's side.
	VLANs map[int]*Host
}

// AttachTrunkHost cables a VLAN-aware host to a new port of bridge (with the given tag, 0: none)
// and gives it one namespace per VLAN in vlans, at addrs[i].
func (s *Switch) AttachTrunkHost(t testing.TB, bridge string, tag int, vlans []int, addrs []string, prefixLen int) *TrunkHost {
	t.Helper()
	th := &TrunkHost{Port: s.prefix + "trk", VLANs: map[int]*Host{}}
	hostBridge := s.AddBridge(t, "hbr")
	nic := th.Port + "h"
	s.addCable(t, th.Port, nic)
	ip(t, "link", "set", nic, "netns", s.Namespace)
	ip(t, "-n", s.Namespace, "link", "set", nic, "up")
	args := []string{"add-port", bridge, th.Port}
	if tag > 0 {
		args = append(args, fmt.Sprintf("tag=%d", tag))
	}
	s.Vsctl(t, args...)
	// The host's own bridge takes every VLAN tagged on its NIC.
	s.Vsctl(t, "add-port", hostBridge, nic, "vlan_mode=trunk")
	for i, v := range vlans {
		th.VLANs[v] = s.AttachHost(t, hostBridge, fmt.Sprintf("v%d", v), addrs[i], prefixLen, v)
	}
	return th
}

// Reaches says whether from gets an echo reply from addr, trying up to tries times (user-space
// Open vSwitch learns slowly, so a first ping may be lost).
func Reaches(t testing.TB, from *Host, addr string, tries int) bool {
	t.Helper()
	for i := 0; i < tries; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := exec.CommandContext(ctx, "ip", "netns", "exec", from.Namespace, "ping", "-c", "1", "-W", "1", addr).Run()
		cancel()
		if err == nil {
			return true
		}
	}
	return false
}

// addCable creates a veth pair whose end switchEnd is in the switch's namespace, up; the other
// end stays in the root namespace for the caller to move.
func (s *Switch) addCable(t testing.TB, switchEnd, other string) {
	t.Helper()
	if s.Namespace == "" {
		t.Fatal("hosts need a forwarding switch: StartSwitch with Options{VSwitchd: true}")
	}
	ip(t, "link", "add", switchEnd, "type", "veth", "peer", "name", other)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", other).Run() })
	ip(t, "link", "set", switchEnd, "netns", s.Namespace)
	ip(t, "-n", s.Namespace, "link", "set", switchEnd, "up")
}

func ip(t testing.TB, args ...string) {
	t.Helper()
	run(t, nil, "ip", args...)
}
