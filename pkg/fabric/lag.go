package fabric

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
)

// MLAG says a LAG's members on this switch are one half of a bond whose other half is on the
// pair's other switch (EOS MLAG, NX-OS vPC, Cumulus CLAG, SONiC MCLAG). Drivers of OSes that have
// it render it from these fields alone; the others refuse the change (ErrUnsupported).
type MLAG struct {
	// Pair is the NetworkDevice's mlagPairs[].name.
	Pair string
	// Domain is the pair's domain id as the switches know it.
	Domain int
	// Peer is the pair's other switch.
	Peer string
}

// LAGWant says a wanted port is a member of a bond.
type LAGWant struct {
	Name     string
	LACP     bool
	FastRate bool
	MLAG     *MLAG
}

// MLAGPair is two switches declared to act as one for link aggregation.
type MLAGPair struct {
	Name     string
	Switches [2]string
	Domain   int
}

// BondCard is one card of a host's bond: the switch port it is cabled to.
type BondCard struct {
	Switch string
	Port   string
}

// LAGPlan is where a host's bond goes: per switch the LAG of the members cabled there.
type LAGPlan struct {
	Name string
	// MLAG names the pair when the bond spans two switches (nil: one switch).
	MLAG *MLAGPair
}

// OSesWithMLAG are the switch operating systems (NetworkDevice networkOS) whose drivers configure
// a multi-chassis LAG, by the name their vendor gives it. Open vSwitch has none; Dell OS10's VLT
// and Junos' MC-LAG are not rendered (see docs/vendor-switches.md). SONiC's MCLAG needs the
// pair's mlagPairs[].sonic (Endpoint.MCLAG).
var OSesWithMLAG = map[string]string{"eos": "MLAG", "nxos": "vPC", "cumulus": "CLAG", "sonic": "MCLAG"}

// MCLAGDomain is a switch's side of its pair's SONiC MCLAG domain, from the NetworkDevice's
// mlagPairs[] and its sonic entries: what `config mclag add DOMAIN SOURCE PEER PEERLINK` is
// given. SONiC keeps one domain per switch and labels neither it nor its members, so the domain
// is metalwire's only when the pair declares it, and a member only when its port-channel is in
// the switch's aggregates range.
type MCLAGDomain struct {
	// Pair is the mlagPairs[].name, Domain its domain, Peer the pair's other switch.
	Pair   string
	Domain int
	Peer   string
	// SourceAddress is this switch's sonic[].sourceAddress, PeerAddress the peer's.
	SourceAddress, PeerAddress string
	// PeerLink is this switch's sonic[].peerLink.
	PeerLink string
}

// MLAG is the MLAG half a member of this domain is on its switch.
func (d *MCLAGDomain) MLAG() *MLAG {
	return &MLAG{Pair: d.Pair, Domain: d.Domain, Peer: d.Peer}
}

// OSesWithoutBonds are the switch operating systems whose drivers make no bond at all, and why: a
// bonded network on them is refused before anything is configured, and the host is not offered.
var OSesWithoutBonds = map[string]string{
	"equinix-metal": "a device's bond0 is the platform's own; choose the network type (layer2-bonded, hybrid-bonded) instead",
}

// PlanLAG decides the bond of a host's cards for one network: its name, and when the cards sit
// on two switches, the declared pair that carries it. osOf gives a switch's networkOS. It fails,
// saying why and what to do, for cards on more than two switches, on two switches not declared
// a pair, or on a pair whose OS has no multi-chassis LAG.
func PlanLAG(host, network string, cards []BondCard, pairs []MLAGPair, osOf func(sw string) string) (LAGPlan, error) {
	plan := LAGPlan{Name: LAGName(host, network)}
	var switches []string
	for _, c := range cards {
		if !slices.Contains(switches, c.Switch) {
			switches = append(switches, c.Switch)
		}
	}
	for _, sw := range switches {
		if why := OSesWithoutBonds[osOf(sw)]; why != "" {
			return plan, fmt.Errorf("host %s: network %s bonds cards on switch %s, whose networkOS %s makes no bond (%s): set linkAggregation: 1 for this network, or cable the host to another switch",
				host, network, sw, osOf(sw), why)
		}
	}
	switch {
	case len(switches) <= 1:
		return plan, nil
	case len(switches) > 2:
		return plan, fmt.Errorf("host %s: network %s bonds cards on %d switches (%s); a bond spans at most one MLAG pair of two switches: cable the cards to one switch or to a declared pair",
			host, network, len(switches), strings.Join(switches, ", "))
	}
	slices.Sort(switches)
	var pair *MLAGPair
	for i := range pairs {
		p := pairs[i].Switches
		if (p[0] == switches[0] && p[1] == switches[1]) || (p[0] == switches[1] && p[1] == switches[0]) {
			pair = &pairs[i]
		}
	}
	if pair == nil {
		return plan, fmt.Errorf("host %s: network %s bonds cards on switches %s and %s, which are not an MLAG pair: declare them in the NetworkDevice's spec.mlagPairs (switch OSes with multi-chassis LAG: eos, nxos, cumulus, sonic) or cable the bonded cards to one switch",
			host, network, switches[0], switches[1])
	}
	for _, sw := range switches {
		if os := osOf(sw); OSesWithMLAG[os] == "" {
			return plan, fmt.Errorf("host %s: network %s bonds cards on switches %s and %s (MLAG pair %s), but switch %s runs networkOS %s, which has no multi-chassis LAG: cable the bonded cards to one switch",
				host, network, switches[0], switches[1], pair.Name, sw, os)
		}
	}
	plan.MLAG = pair
	return plan, nil
}

// LAGName is the bond's name on the switch for a host's network: stable (the same every pass),
// one per host and network, and a valid port name on every switch OS metalwire drives (letters
// and digits, 13 characters: under Linux's 15-character interface names, which Open vSwitch's
// netdev ports follow).
func LAGName(host, network string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(host + "\x00" + network))
	return fmt.Sprintf("lag%010x", h.Sum64()&0xffffffffff)
}

// MLAGFor is the MLAG half of a bond on switch sw, for a bond carried by pair (nil: none).
func MLAGFor(pair *MLAGPair, sw string) *MLAG {
	if pair == nil {
		return nil
	}
	peer := pair.Switches[0]
	if peer == sw {
		peer = pair.Switches[1]
	}
	return &MLAG{Pair: pair.Name, Domain: pair.Domain, Peer: peer}
}

// SameLAG says whether two bonds have the same members, negotiation and VLAN configuration.
func SameLAG(a, b LAG) bool {
	return a.Name == b.Name && a.LACP == b.LACP && a.FastRate == b.FastRate &&
		slices.Equal(sortedNames(a.Members), sortedNames(b.Members)) && samePort(a.Port, b.Port) &&
		sameMLAG(a.MLAG, b.MLAG)
}

func sameMLAG(a, b *MLAG) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func sortedNames(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// Describe reads as a bond's configuration: "lacp-fast bond [eth1 eth2] access vlan 1001".
func (l LAG) Describe() string {
	mode := "static"
	if l.LACP {
		mode = "lacp-slow"
		if l.FastRate {
			mode = "lacp-fast"
		}
	}
	s := fmt.Sprintf("%s bond %v %s", mode, sortedNames(l.Members), l.Port.Describe())
	if l.MLAG != nil {
		s += fmt.Sprintf(" mlag %s domain %d peer %s", l.MLAG.Pair, l.MLAG.Domain, l.MLAG.Peer)
	}
	return s
}
