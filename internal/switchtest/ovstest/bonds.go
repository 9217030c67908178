package ovstest

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BondedHost stands in for a host whose two cards its OS bonds (this kernel has no bonding
// module): the cards are veths from two switch ports into a bridge of the host's own, where an
// Open vSwitch bond of the two stands in for the host's bonding driver, and a namespace behind
// that bridge sends and receives through the bond.
type BondedHost struct {
	*Host
	// Ports are the switch ports the two cards are cabled to.
	Ports []string
	// Cards are the host's ends of the two cables (the bond's members) and MACs their MAC
	// addresses: what the host's network data names.
	Cards, MACs []string
	// Bridge is the host's own bridge and Bond its bond port there.
	Bridge, Bond string
}

// AttachBondedHost cables a host with two bonded cards to two new ports of bridge, each an
// access port of tag (0: none). lacp makes the host's bond an LACP one (lacp=active,
// balance-tcp, fast LACP so a test sees negotiation within seconds); otherwise active-backup.
func (s *Switch) AttachBondedHost(t testing.TB, bridge, name, addr string, prefixLen, tag int, lacp bool) *BondedHost {
	t.Helper()
	b := &BondedHost{Bridge: s.AddBridge(t, name+"br"), Bond: "bond-" + name}
	for i := range 2 {
		port := fmt.Sprintf("%s%s%c", s.prefix, name, 'a'+i)
		card := port + "h"
		if len(card) > 15 {
			t.Fatalf("host name %q too long for an interface name", name)
		}
		s.addCable(t, port, card)
		ip(t, "link", "set", card, "netns", s.Namespace)
		ip(t, "-n", s.Namespace, "link", "set", card, "up")
		args := []string{"add-port", bridge, port}
		if tag > 0 {
			args = append(args, fmt.Sprintf("tag=%d", tag))
		}
		s.Vsctl(t, args...)
		b.Ports, b.Cards = append(b.Ports, port), append(b.Cards, card)
		mac := strings.TrimSpace(run(t, nil, "ip", "-n", s.Namespace, "-br", "link", "show", card))
		if f := strings.Fields(mac); len(f) >= 3 {
			b.MACs = append(b.MACs, f[2])
		}
	}
	args := []string{"add-bond", b.Bridge, b.Bond, b.Cards[0], b.Cards[1]}
	if lacp {
		args = append(args, "lacp=active", "bond_mode=balance-tcp", "other_config:lacp-time=fast")
	} else {
		args = append(args, "bond_mode=active-backup")
	}
	s.Vsctl(t, args...)
	b.Host = s.AttachHost(t, b.Bridge, name, addr, prefixLen, 0)
	return b
}

// SetCardDown takes the host's card i down (its cable loses carrier), or up again.
func (b *BondedHost) SetCardDown(t testing.TB, s *Switch, i int, down bool) {
	t.Helper()
	state := "up"
	if down {
		state = "down"
	}
	ip(t, "-n", s.Namespace, "link", "set", b.Cards[i], state)
}

// Appctl runs ovs-appctl against this switch's ovs-vswitchd (bond/show, lacp/show).
func (s *Switch) Appctl(t testing.TB, args ...string) string {
	t.Helper()
	return run(t, s.env(), "ovs-appctl", append([]string{"-t", filepath.Join(s.Dir, "ovs-vswitchd.ctl")}, args...)...)
}

// WaitAppctl runs ovs-appctl until its output contains every one of want, or fails the test
// after timeout showing the last output.
func (s *Switch) WaitAppctl(t testing.TB, timeout time.Duration, want []string, args ...string) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		out, err := exec.Command("ovs-appctl", append([]string{"-t", filepath.Join(s.Dir, "ovs-vswitchd.ctl")}, args...)...).CombinedOutput()
		ok := err == nil
		for _, w := range want {
			ok = ok && strings.Contains(string(out), w)
		}
		if ok {
			return string(out)
		}
		if time.Now().After(deadline) {
			t.Fatalf("ovs-appctl %s: want %q within %s, last output:\n%s", strings.Join(args, " "), want, timeout, out)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
