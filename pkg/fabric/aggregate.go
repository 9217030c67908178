package fabric

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Aggregates is the range of aggregate interface numbers metalwire owns on a switch (the
// NetworkDevice's spec.switches[].aggregates), for switches that number their aggregates and
// cannot label them (SONiC's PortChannelN, and the openconfig driver, whose aggregate names are
// the vendor's). A bond's aggregate is the one its name numbers within the range (AggregateOf):
// the same every pass, found again by the name alone; an aggregate outside the range is never
// touched.
type Aggregates struct {
	First, Last int
	// Prefix is the aggregate's name before its number ("PortChannel", "Port-Channel", "ae").
	Prefix string
}

// AggregateOf is the aggregate a bond of that name takes: Prefix and First + the FNV-1a 32-bit
// hash of the name modulo the range's size. Two bonds whose names land on one number cannot both
// have it: a driver refuses the second, naming the first, rather than take the first's.
func (a Aggregates) AggregateOf(lag string) (string, int) {
	h := fnv.New32a()
	_, _ = h.Write([]byte(lag))
	n := a.First + int(int64(h.Sum32())%int64(a.Last-a.First+1))
	return a.Prefix + strconv.Itoa(n), n
}

// Shared says why bond cannot be made on switch sw: other, a bond of the same batch, takes
// aggregate, the number both names land on.
func (a Aggregates) Shared(sw, aggregate, other, bond string) string {
	return fmt.Sprintf("bonds %s and %s both number %s within spec.switches[%s].aggregates %d-%d: another range lands them apart, but renumbers every bond of the switch (see docs/fabric.md, Aggregates)",
		other, bond, aggregate, sw, a.First, a.Last)
}

// Owns says whether an aggregate interface name is one of the range's.
func (a Aggregates) Owns(name string) bool {
	digits, ok := strings.CutPrefix(name, a.Prefix)
	n, err := strconv.Atoi(digits)
	return ok && err == nil && strconv.Itoa(n) == digits && n >= a.First && n <= a.Last
}

// CheckAggregates says what is wrong with switch sw's range for bonds of networkOS os, naming the
// field: nil when bonds can be numbered.
func CheckAggregates(sw, os string, a *Aggregates) error {
	if a == nil {
		return fmt.Errorf("networkOS %s numbers its aggregates (port-channels) and metalwire can name one after a bond only within a range it owns: set spec.switches[%s].aggregates (first, last) to numbers no aggregate of your own uses", os, sw)
	}
	if a.First < 0 || a.Last < a.First {
		return fmt.Errorf("spec.switches[%s].aggregates %d-%d is no range: give first, then a last not below it", sw, a.First, a.Last)
	}
	if a.Prefix == "" {
		return fmt.Errorf("spec.switches[%s].aggregates.prefix is empty: set the aggregate names' prefix", sw)
	}
	return nil
}

// OSesNumberingBonds are the switch operating systems whose bonds are numbered from the switch's
// declared range (Aggregates): a bond on one of them needs spec.switches[].aggregates
// (CheckAggregates says what to set).
var OSesNumberingBonds = map[string]bool{"sonic": true, "openconfig": true}

// OSesWithoutStaticBonds are the switch operating systems whose bonds run LACP only, and why: a
// network asking lag.mode static there is refused before anything is configured.
var OSesWithoutStaticBonds = map[string]string{
	"sonic": "SONiC's port-channels run LACP (teamd's lacp runner) only",
}

// BondRefusal says why a host's bond for a network cannot go on switch sw of networkOS os, for
// what PlanLAG does not see: the switch's declared aggregates (agg, nil when none) and whether
// the bond is static. nil when the switch can carry it.
func BondRefusal(host, network, sw, os string, agg *Aggregates, static bool) error {
	if OSesNumberingBonds[os] && agg == nil {
		return fmt.Errorf("host %s: network %s bonds cards on switch %s: %w", host, network, sw, CheckAggregates(sw, os, nil))
	}
	if why := OSesWithoutStaticBonds[os]; why != "" && static {
		return fmt.Errorf("host %s: network %s asks a static bond (lag.mode static) on switch %s, whose networkOS %s makes none (%s): set lag.mode lacp for this network", host, network, sw, os, why)
	}
	return nil
}

// AggregateHolder is a bond that has, or asks, an aggregate number on a switch that numbers them.
type AggregateHolder struct {
	Switch, Bond string
	// Host and Network say whose bond it is; Host is empty for a bond the switch still carries
	// that no host has any more (it goes once the switch removes it).
	Host, Network string
}

func (h AggregateHolder) describe() string {
	if h.Host == "" {
		return fmt.Sprintf("bond %s, which switch %s still carries for a host that left (the number is free once the switch removed it)", h.Bond, h.Switch)
	}
	return fmt.Sprintf("host %s's bond for network %s (%s)", h.Host, h.Network, h.Bond)
}

// AggregateBook hands out the aggregate numbers of the switches that declare a range to bonds,
// in the order they claim them: the first bond whose name lands on a number has it, a later one
// of another name is refused, naming the first, before anything is sent (a switch given both
// would fail its whole batch).
type AggregateBook struct {
	ranges map[string]Aggregates
	held   map[string]map[int]AggregateHolder
}

// NewAggregateBook is a book over the switches' declared ranges, by switch name.
func NewAggregateBook(ranges map[string]Aggregates) *AggregateBook {
	return &AggregateBook{ranges: ranges, held: map[string]map[int]AggregateHolder{}}
}

// Check says whether bond b could take its number now: nil when its switch declares no range,
// the number is free, or b has it already.
func (k *AggregateBook) Check(b AggregateHolder) error {
	agg, ok := k.ranges[b.Switch]
	if !ok {
		return nil
	}
	name, n := agg.AggregateOf(b.Bond)
	other, taken := k.held[b.Switch][n]
	if !taken || other.Bond == b.Bond {
		return nil
	}
	return fmt.Errorf("host %s: network %s's bond (%s) on switch %s would be aggregate %s, which %s has: the two bonds' names land on one number of spec.switches[%s].aggregates %d-%d; give the switch a wider range (another range renumbers every bond of the switch), or leave one of the hosts out",
		b.Host, b.Network, b.Bond, b.Switch, name, other.describe(), b.Switch, agg.First, agg.Last)
}

// Claim gives bond b its number, or refuses it as Check does.
func (k *AggregateBook) Claim(b AggregateHolder) error {
	if err := k.Check(b); err != nil {
		return err
	}
	agg, ok := k.ranges[b.Switch]
	if !ok {
		return nil
	}
	_, n := agg.AggregateOf(b.Bond)
	if k.held[b.Switch] == nil {
		k.held[b.Switch] = map[int]AggregateHolder{}
	}
	if other, taken := k.held[b.Switch][n]; !taken || other.Host == "" {
		k.held[b.Switch][n] = b // the first to claim it; or the host of a bond the switch carries
	}
	return nil
}
