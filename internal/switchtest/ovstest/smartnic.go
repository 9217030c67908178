package ovstest

import (
	"strings"
	"testing"
)

// SmartNICFabric is a top-of-rack switch, a SmartNIC's own switch (a second Open vSwitch with its
// own ovsdb-server and ovs-vswitchd) and a host behind the card: the host reaches the rack only
// through the card's switch. A peer on the top-of-rack switch sits in a VLAN of the test's
// choosing; every other port is in the idle VLAN, as the fabric controller finds them.
type SmartNICFabric struct {
	ToR, Card             *Switch
	ToRBridge, CardBridge string
	// ToRPort is the top-of-rack port cabled to the card's UplinkPort; the card's HostPort faces
	// Host (Host.Port).
	ToRPort, UplinkPort, HostPort string
	Host, Peer                    *Host
}

// NewSmartNICFabric starts both switches, cables them and the host, and puts the peer (at
// peerAddr) in peerVLAN on the top-of-rack switch. The host is at hostAddr, both in one /24.
func NewSmartNICFabric(t testing.TB, hostAddr, peerAddr string, peerVLAN int) *SmartNICFabric {
	t.Helper()
	f := &SmartNICFabric{ToR: StartSwitch(t, Options{VSwitchd: true}), Card: StartSwitch(t, Options{VSwitchd: true})}
	ver := strings.Fields(run(t, nil, "ovs-vswitchd", "--version"))
	for _, s := range []*Switch{f.ToR, f.Card} {
		s.Vsctl(t, "set", "Open_vSwitch", ".", "ovs_version="+ver[len(ver)-1])
	}
	f.ToRBridge, f.CardBridge = f.ToR.AddBridge(t, "br0"), f.Card.AddBridge(t, "dpu")
	// The cable from the rack to the card: one end in each switch's namespace.
	f.ToRPort, f.UplinkPort = f.ToR.prefix+"up", f.Card.prefix+"up"
	f.ToR.addCable(t, f.ToRPort, f.UplinkPort)
	ip(t, "link", "set", f.UplinkPort, "netns", f.Card.Namespace)
	ip(t, "-n", f.Card.Namespace, "link", "set", f.UplinkPort, "up")
	f.ToR.AddPorts(t, f.ToRBridge, IdleVLAN, f.ToRPort)
	f.Card.AddPorts(t, f.CardBridge, IdleVLAN, f.UplinkPort)
	f.Host = f.Card.AttachHost(t, f.CardBridge, "h1", hostAddr, 24, IdleVLAN)
	f.HostPort = f.Host.Port
	f.Peer = f.ToR.AttachHost(t, f.ToRBridge, "peer", peerAddr, 24, peerVLAN)
	return f
}
