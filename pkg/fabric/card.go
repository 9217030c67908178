package fabric

// CardNeed is what one host card needs of the fabric: the switch port it is cabled to, the
// networks it carries there, and, for a SmartNIC, the card's own switch standing between the
// host and that port.
type CardNeed struct {
	// Switch and Port are the switch port the card is cabled to.
	Switch, Port string
	// SmartNIC is the card's own switch (nil: a plain card).
	SmartNIC *CardSwitch
	// Mode is how the host sees its networks: access (untagged) or trunk (tagged).
	Mode PortMode
	// Networks are the networks the card carries, the first first.
	Networks []CardNetwork
	// LAG makes the card's port a member of a bond (plain cards only).
	LAG *LAGWant
	// Down shuts the port facing the host.
	Down bool
	// HostMAC is the card's MAC, which egress rules of its lists match.
	HostMAC string
}

// CardNetwork is a network a card carries: its name, VLAN and access list (nil: none; its
// HostMAC is the card's).
type CardNetwork struct {
	Name string
	VLAN int
	ACL  *ACLWant
}

// CardSwitch is a SmartNIC's own switch: its port facing the host and its port cabled to the
// top-of-rack port.
type CardSwitch struct {
	Switch, HostPort, UplinkPort string
}

// Wants lists the switch ports the card needs. A plain card's port carries its networks as
// Mode says, with their lists and state. A SmartNIC's host port does that on the card's switch,
// and the card's uplink and the top-of-rack port both trunk the networks' VLANs: the host
// reaches a network only when the three agree.
func (c CardNeed) Wants() []PortWant {
	out := make([]PortWant, 0, len(c.Networks)*3)
	for _, n := range c.Networks {
		acl := n.ACL
		if acl != nil && c.HostMAC != "" {
			withMAC := *acl
			withMAC.HostMAC = c.HostMAC
			acl = &withMAC
		}
		if c.SmartNIC == nil {
			out = append(out, PortWant{Switch: c.Switch, Port: c.Port, Mode: c.Mode, VLAN: n.VLAN, LAG: c.LAG, Down: c.Down, ACL: acl})
			continue
		}
		out = append(out,
			PortWant{Switch: c.SmartNIC.Switch, Port: c.SmartNIC.HostPort, Mode: c.Mode, VLAN: n.VLAN, Down: c.Down, ACL: acl},
			PortWant{Switch: c.SmartNIC.Switch, Port: c.SmartNIC.UplinkPort, Mode: ModeTrunk, VLAN: n.VLAN},
			PortWant{Switch: c.Switch, Port: c.Port, Mode: ModeTrunk, VLAN: n.VLAN})
	}
	return out
}
