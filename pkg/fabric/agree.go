package fabric

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The host and its switch ports must agree: what a host's network data sends on each card
// (untagged, tagged VLANs, bonded with which cards and how) must be what the switch port at the
// other end of the cable carries. Agree compares the two sides; neither is written by this
// package.

// HostCard is how a host's network data uses one of its physical cards.
type HostCard struct {
	// MAC of the card (any case or separator), and the name the network data gives it; the
	// name is for messages, the MAC pairs the card with its switch port.
	MAC, Name string
	// Untagged: the host configures addresses on the card itself or on its bond, so it sends
	// untagged frames.
	Untagged bool
	// Tagged are the VLAN ids of the VLAN interfaces the host puts on the card or its bond,
	// ascending.
	Tagged []int
	// Bond is the bond the card is a member of, or nil.
	Bond *HostBond
}

// HostBond is a bond of the host's cards.
type HostBond struct {
	// Name is the bond's id (or interface name) in the network data.
	Name string
	// Mode is the bonding mode as network_data.json writes it (802.3ad, active-backup, ...).
	Mode string
	// Members are the MACs of the member cards.
	Members []string
}

// CardPort is what the switch port a host's card is cabled to carries, as the fabric set it.
type CardPort struct {
	// MAC and Name of the host's card (from its NIC object).
	MAC, Name string
	// Switch and Port name the switch port.
	Switch, Port string
	// Assigned is false for a card no network uses: the fabric left its port idle, and what
	// the host does on it is not compared.
	Assigned bool
	// Mode, VLAN (access VLAN, or a trunk's native one; 0: none) and Trunk (tagged VLANs) are
	// the port's configuration.
	Mode  PortMode
	VLAN  int
	Trunk []int
	// LAG is the switch-side bond the port is a member of ("": none); LACP says it runs LACP.
	LAG  string
	LACP bool
}

// Mismatch is one disagreement between a host card and its switch port.
type Mismatch struct {
	// Card names the host's card ("eno1 (aa:bb:cc:dd:ee:01)"); Port the switch port
	// ("tor-1 eth1").
	Card, Port string
	// Host and Switch say what each side does.
	Host, Switch string
}

func (m Mismatch) String() string {
	return fmt.Sprintf("card %s on switch port %s: the host %s, but the switch port %s", m.Card, m.Port, m.Host, m.Switch)
}

// Agree compares the host's use of its cards with the switch ports they are cabled to and
// returns every disagreement a user would notice on real hardware (traffic dropped or a bond
// that does not come up), ordered by card. Cards whose ports no network uses are not compared,
// nor host cards without a known switch port.
func Agree(host []HostCard, ports []CardPort) []Mismatch {
	byMAC := make(map[string]CardPort, len(ports))
	for _, p := range ports {
		byMAC[normalMAC(p.MAC)] = p
	}
	var out []Mismatch
	for _, c := range host {
		p, ok := byMAC[normalMAC(c.MAC)]
		if !ok || !p.Assigned {
			continue
		}
		mm := func(hostSide, switchSide string) {
			out = append(out, Mismatch{Card: cardName(c), Port: p.Switch + " " + p.Port, Host: hostSide, Switch: switchSide})
		}
		carried := p.carries()
		for _, v := range c.Tagged {
			switch {
			case p.Mode == ModeAccess:
				mm(fmt.Sprintf("sends VLAN %d tagged", v), fmt.Sprintf("is an access port in VLAN %d and drops tagged frames", p.VLAN))
			case !slices.Contains(p.Trunk, v):
				mm(fmt.Sprintf("sends VLAN %d tagged", v), "is a trunk of "+carried+", without VLAN "+fmt.Sprint(v))
			}
		}
		if c.Untagged && p.Mode == ModeTrunk && p.VLAN == 0 {
			mm("sends untagged frames (an address on "+untaggedOn(c)+")", "is a trunk of "+carried+" with no native VLAN and drops them")
		}
		out = append(out, bondMismatches(c, p, byMAC)...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Card < out[j].Card })
	return out
}

// bondMismatches compares a card's bond on the host with its port's LAG on the switch.
func bondMismatches(c HostCard, p CardPort, byMAC map[string]CardPort) []Mismatch {
	mm := func(hostSide, switchSide string) Mismatch {
		return Mismatch{Card: cardName(c), Port: p.Switch + " " + p.Port, Host: hostSide, Switch: switchSide}
	}
	lacpHost := c.Bond != nil && c.Bond.Mode == "802.3ad"
	switch {
	case c.Bond == nil && p.LAG != "":
		return []Mismatch{mm("does not bond the card", "is a member of LAG "+p.LAG)}
	case c.Bond == nil:
		return nil
	case lacpHost && p.LAG == "":
		return []Mismatch{mm("bonds it in "+c.Bond.Name+" with LACP (802.3ad)", "is not in a LAG, so LACP never negotiates")}
	case lacpHost && !p.LACP:
		return []Mismatch{mm("bonds it in "+c.Bond.Name+" with LACP (802.3ad)", "is in static LAG "+p.LAG+", which does not answer LACP")}
	case !lacpHost && p.LACP:
		return []Mismatch{mm("bonds it in "+c.Bond.Name+" as "+c.Bond.Mode+", without LACP", "is in LACP LAG "+p.LAG+", which waits for LACP")}
	}
	// Every member of the host's bond must sit on a port configured as this one is, and (when
	// the switch bonds) in the same LAG.
	var out []Mismatch
	for _, mac := range c.Bond.Members {
		if normalMAC(mac) == normalMAC(c.MAC) {
			continue
		}
		q, ok := byMAC[normalMAC(mac)]
		if !ok {
			continue
		}
		peer := fmt.Sprintf("%s's other member %s (switch port %s %s)", c.Bond.Name, cardName(HostCard{MAC: q.MAC, Name: q.Name}), q.Switch, q.Port)
		switch {
		case p.LAG != "" && q.LAG != p.LAG:
			out = append(out, mm("bonds it with "+peer, "is in LAG "+p.LAG+" and the other port "+lagOrNone(q.LAG)))
		case !q.Assigned || q.Mode != p.Mode || q.VLAN != p.VLAN || !slices.Equal(q.Trunk, p.Trunk):
			out = append(out, mm("bonds it with "+peer, "carries "+p.describe()+" while the other port carries "+q.describe()))
		}
	}
	return out
}

func lagOrNone(lag string) string {
	if lag == "" {
		return "in none"
	}
	return "in LAG " + lag
}

// carries writes a trunk's VLANs for a message: "VLANs 1000, 1001".
func (p CardPort) carries() string {
	ids := make([]string, len(p.Trunk))
	for i, v := range p.Trunk {
		ids[i] = fmt.Sprint(v)
	}
	if len(ids) == 1 {
		return "VLAN " + ids[0]
	}
	return "VLANs " + strings.Join(ids, ", ")
}

// describe writes the port's configuration for a message.
func (p CardPort) describe() string {
	switch {
	case !p.Assigned:
		return "no network (idle)"
	case p.Mode == ModeAccess:
		return fmt.Sprintf("access VLAN %d", p.VLAN)
	case p.VLAN != 0:
		return fmt.Sprintf("trunk of %s, native VLAN %d", p.carries(), p.VLAN)
	}
	return "trunk of " + p.carries()
}

func untaggedOn(c HostCard) string {
	if c.Bond != nil {
		return c.Bond.Name
	}
	return c.Name
}

func cardName(c HostCard) string {
	switch {
	case c.Name == "":
		return c.MAC
	case c.MAC == "":
		return c.Name
	}
	return c.Name + " (" + strings.ToLower(c.MAC) + ")"
}
