package fabric

import (
	"cmp"
	"slices"
	"strings"
)

// HostInterface is one network interface of a host as inspection and the host's own spec
// describe it.
type HostInterface struct {
	Name, MAC string
	// SpeedMbps is the link speed inspection measured.
	SpeedMbps int
	// LLDP is what the interface's neighbour announced (nil: nothing seen).
	LLDP *Neighbour
	// SwitchPort is where the host's spec says the interface is cabled; it wins over LLDP.
	SwitchPort *Neighbour
}

// Neighbour is a switch port seen from a host interface: the switch's id (its management MAC
// address, or its LLDP chassis id), its system name when LLDP gave one, and the port's name.
type Neighbour struct {
	SwitchID, SystemName, Port string
}

// KnownSwitch is a switch of a NetworkDevice that hosts may name.
type KnownSwitch struct {
	Device, Name string
	// MAC is the switch's management MAC address (may be empty).
	MAC string
}

// CabledCard is a host interface matched to a known switch's port.
type CabledCard struct {
	Interface HostInterface
	Switch    KnownSwitch
	Port      string
	// From says where the cabling came from: switchPort (the host's spec) or lldp.
	From string
}

// Cabling matches a host's interfaces to known switches: by the spec's switchPort when it has
// one, else by LLDP; a switch is named by its management MAC address (any case, any of : - .
// separators) or, for LLDP, by its system name equal to the switch's name. It returns the
// cabled cards in interface order and the switch ids the host named that match no known
// switch, once each.
func Cabling(ifaces []HostInterface, switches []KnownSwitch) (cards []CabledCard, unknown []string) {
	for _, in := range ifaces {
		seen, from := in.LLDP, "lldp"
		if in.SwitchPort != nil {
			seen, from = in.SwitchPort, "switchPort"
		}
		if seen == nil || seen.Port == "" {
			continue
		}
		sw, ok := findSwitch(*seen, switches)
		if !ok {
			id := cmp.Or(seen.SwitchID, seen.SystemName)
			if id != "" && !slices.Contains(unknown, id) {
				unknown = append(unknown, id)
			}
			continue
		}
		cards = append(cards, CabledCard{Interface: in, Switch: sw, Port: seen.Port, From: from})
	}
	return cards, unknown
}

func findSwitch(n Neighbour, switches []KnownSwitch) (KnownSwitch, bool) {
	id := normalMAC(n.SwitchID)
	for _, s := range switches {
		if id != "" && normalMAC(s.MAC) == id {
			return s, true
		}
	}
	for _, s := range switches {
		if n.SystemName != "" && s.Name == n.SystemName {
			return s, true
		}
	}
	return KnownSwitch{}, false
}

// normalMAC writes a MAC address one way: lower case, no separators.
func normalMAC(mac string) string {
	return strings.ToLower(strings.NewReplacer(":", "", "-", "", ".", "").Replace(mac))
}
