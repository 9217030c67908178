package ipam

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// Strategy picks which free address a new claim gets.
type Strategy string

const (
	// Sequential hands out the lowest free address, in the order the entries of spec.pools list
	// their ranges. It is upstream's default.
	Sequential Strategy = "sequential"
	// Random hands out a free address chosen uniformly, so that addresses are reused late.
	Random Strategy = "random"
)

// Spec is an IPPool's addressing as the API carries it: strings, zero values meaning unset. The
// IPPool controller copies its object into a Spec; this package never sees the API types.
type Spec struct {
	Strategy Strategy
	Pools    []Range
	// Prefix, Gateway and DNSServers apply to every entry of Pools that does not set its own.
	Prefix     int
	Gateway    string
	DNSServers []string
	// ExcludedAddresses are never handed out: each an address, a range "a-b", or a CIDR.
	ExcludedAddresses []string
	// PreAllocations pins a claim (by name) to an address: it is kept for that claim only.
	PreAllocations   map[string]string
	ReuseGracePeriod time.Duration
}

// Range is one entry of spec.pools.
type Range struct {
	Start, End, Subnet string
	Prefix             int
	Gateway            string
	DNSServers         []string
}

// exclusion is one span of addresses never handed out, with the reason a refused request is told.
type exclusion struct {
	first, last u128
	why         string
}

// Parse checks a spec and turns it into a Pool. It reports every invalid field at once, as
// FieldErrors with paths relative to the IPPool spec.
func Parse(spec Spec) (*Pool, error) {
	var errs FieldErrors
	p := &Pool{
		Strategy:         spec.Strategy,
		ReuseGracePeriod: spec.ReuseGracePeriod,
		PreAllocations:   map[string]netip.Addr{},
	}
	switch spec.Strategy {
	case "":
		p.Strategy = Sequential
	case Sequential, Random:
	default:
		errs.add("allocationStrategy", "%q is not a strategy; use %q or %q", spec.Strategy, Sequential, Random)
	}
	if spec.ReuseGracePeriod < 0 {
		errs.add("reuseGracePeriod", "%s is negative; use 0 to reuse addresses at once", spec.ReuseGracePeriod)
	}

	defaults := parseDefaults(spec, &errs)
	var excl []exclusion
	familySource := ""
	for i, r := range spec.Pools {
		e, entryExcl, ok := parseRange(fmt.Sprintf("pools[%d]", i), r, defaults, &errs)
		if !ok {
			continue
		}
		if familySource == "" {
			p.is4, familySource = e.First.Is4(), fmt.Sprintf("pools[%d]", i)
		} else if e.First.Is4() != p.is4 {
			errs.add(fmt.Sprintf("pools[%d]", i), "is %s but %s is %s; use one pool per address family",
				family(e.First.Is4()), familySource, family(p.is4))
			continue
		}
		p.Entries = append(p.Entries, e)
		p.entryIndex = append(p.entryIndex, i)
		excl = append(excl, entryExcl...)
	}
	checkOverlaps(p, &errs)

	for i, s := range spec.ExcludedAddresses {
		field := fmt.Sprintf("excludedAddresses[%d]", i)
		first, last, err := parseExcluded(s)
		switch {
		case err != nil:
			errs.add(field, "%s", err)
		case familySource != "" && first.Is4() != p.is4:
			errs.add(field, "%q is %s but the pool is %s", s, family(first.Is4()), family(p.is4))
		default:
			excl = append(excl, exclusion{addrToU128(first), addrToU128(last), "excluded by " + field})
		}
	}
	if len(errs) > 0 {
		return nil, errs.unique()
	}
	if err := p.buildSegments(excl); err != nil {
		errs = append(errs, err)
		return nil, errs
	}
	parsePreAllocations(p, spec.PreAllocations, &errs)
	if len(errs) > 0 {
		return nil, errs
	}
	return p, nil
}

// defaults are the top-level prefix, gateway and DNS servers, parsed once.
type defaults struct {
	prefix     int
	gateway    netip.Addr
	dnsServers []netip.Addr
}

func parseDefaults(spec Spec, errs *FieldErrors) defaults {
	d := defaults{prefix: spec.Prefix}
	if spec.Prefix < 0 || spec.Prefix > 128 {
		errs.add("prefix", "%d is not a prefix length; use 1-32 for IPv4 or 1-128 for IPv6", spec.Prefix)
		d.prefix = 0
	}
	if spec.Gateway != "" {
		d.gateway, _ = parseAddr("gateway", spec.Gateway, errs)
	}
	d.dnsServers = parseAddrs("dnsServers", spec.DNSServers, errs)
	return d
}

// parseRange resolves one entry: its first and last address, its effective prefix, gateway and
// DNS servers, and the addresses inside it that are never handed out (network, broadcast,
// gateway).
func parseRange(path string, r Range, d defaults, errs *FieldErrors) (Entry, []exclusion, bool) {
	before := len(*errs)
	var start, end netip.Addr
	var subnet netip.Prefix
	if r.Start != "" {
		start, _ = parseAddr(path+".start", r.Start, errs)
	}
	if r.End != "" {
		end, _ = parseAddr(path+".end", r.End, errs)
	}
	if r.Subnet != "" {
		subnet = parseSubnet(path+".subnet", r.Subnet, errs)
	}
	if len(*errs) > before {
		return Entry{}, nil, false
	}
	if !start.IsValid() && !subnet.IsValid() {
		if end.IsValid() {
			errs.add(path+".start", "required with end; set start, or a subnet to start from")
		} else {
			errs.add(path, "has no addresses; set start and end, or a subnet")
		}
		return Entry{}, nil, false
	}

	// The entry's family is its first field's; every other field must agree.
	anchor, anchorField := start, "start"
	if !anchor.IsValid() {
		anchor, anchorField = subnet.Addr(), "subnet"
	}
	gateway, gatewayField := d.gateway, "gateway"
	if r.Gateway != "" {
		gateway, _ = parseAddr(path+".gateway", r.Gateway, errs)
		gatewayField = path + ".gateway"
	}
	for _, f := range []struct {
		name string
		addr netip.Addr
	}{{path + ".end", end}, {path + ".subnet", subnet.Addr()}, {gatewayField, gateway}} {
		if f.addr.IsValid() && f.addr.Is4() != anchor.Is4() {
			errs.add(f.name, "%s is %s but %s is %s; an entry holds one address family",
				f.addr, family(f.addr.Is4()), path+"."+anchorField, family(anchor.Is4()))
		}
	}
	bitLen := anchor.BitLen()
	prefix, prefixField := d.prefix, "prefix"
	if r.Prefix != 0 {
		prefix, prefixField = r.Prefix, path+".prefix"
	}
	if prefix == 0 && subnet.IsValid() {
		prefix = subnet.Bits()
	}
	if prefix < 0 || prefix > bitLen {
		errs.add(prefixField, "%d is not a prefix length for %s; use 1-%d", prefix, family(anchor.Is4()), bitLen)
	}
	if len(*errs) > before {
		return Entry{}, nil, false
	}

	// The subnet whose network and broadcast addresses stay out: the explicit one, or for a
	// start-only entry the one start and prefix imply.
	block := subnet
	first, last := start, end
	switch {
	case !first.IsValid():
		first = subnet.Addr()
	case subnet.IsValid() && !subnet.Contains(first):
		errs.add(path+".start", "%s is outside subnet %s; move start into the subnet or widen it", first, subnet)
	}
	if !last.IsValid() {
		if !subnet.IsValid() {
			if prefix == 0 {
				errs.add(path+".end", "required when start has no subnet or prefix; set end, subnet or prefix")
				return Entry{}, nil, false
			}
			block = netip.PrefixFrom(start, prefix).Masked()
		}
		last = u128ToAddr(addrToU128(block.Addr()).or(hostMask(bitLen, block.Bits())), anchor.Is4())
	} else if subnet.IsValid() && !subnet.Contains(last) {
		errs.add(path+".end", "%s is outside subnet %s; move end into the subnet or widen it", last, subnet)
	}
	if len(*errs) == before && last.Less(first) {
		errs.add(path+".end", "%s is before start %s; swap start and end", last, first)
	}
	if prefix == 0 {
		errs.add(path+".prefix", "unknown: set prefix on the entry or at the top level, or give a subnet")
	}
	if len(*errs) > before {
		return Entry{}, nil, false
	}

	e := Entry{First: first, Last: last, Subnet: subnet, Prefix: prefix, Gateway: gateway, DNSServers: d.dnsServers}
	if len(r.DNSServers) > 0 {
		e.DNSServers = parseAddrs(path+".dnsServers", r.DNSServers, errs)
	}
	return e, reservedInBlock(path, block, gateway), len(*errs) == before
}

// reservedInBlock lists the addresses no host may take: the gateway, and a subnet's network
// address and (IPv4) broadcast address. Point-to-point blocks (/31, /32, IPv6 /127, /128) have
// none, as RFC 3021 and RFC 6164 use every address there.
func reservedInBlock(path string, block netip.Prefix, gateway netip.Addr) []exclusion {
	var out []exclusion
	if gateway.IsValid() {
		g := addrToU128(gateway)
		out = append(out, exclusion{g, g, fmt.Sprintf("the gateway of %s", path)})
	}
	if !block.IsValid() || block.Addr().BitLen()-block.Bits() < 2 {
		return out
	}
	network := addrToU128(block.Addr())
	out = append(out, exclusion{network, network, fmt.Sprintf("the network address of %s (%s)", block, path)})
	if block.Addr().Is4() {
		broadcast := network.or(hostMask(32, block.Bits()))
		out = append(out, exclusion{broadcast, broadcast, fmt.Sprintf("the broadcast address of %s (%s)", block, path)})
	}
	return out
}

// checkOverlaps refuses entries that share addresses: one address in two entries would have two
// gateways and two places in the sequential order.
func checkOverlaps(p *Pool, errs *FieldErrors) {
	order := make([]int, len(p.Entries))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return p.Entries[a].First.Compare(p.Entries[b].First) })
	for k := 1; k < len(order); k++ {
		prev, cur := p.Entries[order[k-1]], p.Entries[order[k]]
		if !prev.Last.Less(cur.First) {
			a, b := order[k-1], order[k]
			if a > b {
				a, b = b, a
			}
			errs.add(fmt.Sprintf("pools[%d]", p.entryIndex[b]), "%s-%s overlaps pools[%d] (%s-%s); make the ranges disjoint",
				p.Entries[b].First, p.Entries[b].Last, p.entryIndex[a], p.Entries[a].First, p.Entries[a].Last)
		}
	}
}

func parsePreAllocations(p *Pool, pre map[string]string, errs *FieldErrors) {
	owners := make([]string, 0, len(pre))
	for owner := range pre {
		owners = append(owners, owner)
	}
	slices.Sort(owners)
	pinnedBy := map[netip.Addr]string{}
	for _, owner := range owners {
		field := fmt.Sprintf("preAllocations[%s]", owner)
		addr, ok := parseAddr(field, pre[owner], errs)
		if !ok {
			continue
		}
		if _, in := p.position(addr); !in {
			errs.add(field, "%s; pick an address of the pool", p.whyNotIn(addr))
			continue
		}
		if other, dup := pinnedBy[addr]; dup {
			errs.add(field, "%s is also pinned to claim %q; give each claim its own address", addr, other)
			continue
		}
		pinnedBy[addr] = owner
		p.PreAllocations[owner] = addr
	}
}

func parseAddr(field, s string, errs *FieldErrors) (netip.Addr, bool) {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		errs.add(field, "%s is not an IP address", s)
		return netip.Addr{}, false
	}
	if a.Zone() != "" {
		errs.add(field, "%s has a zone; remove %q", s, "%"+a.Zone())
		return netip.Addr{}, false
	}
	// net.ParseIP, which upstream uses, reads ::ffff:a.b.c.d as IPv4; so do we.
	return a.Unmap(), true
}

func parseAddrs(field string, in []string, errs *FieldErrors) []netip.Addr {
	out := make([]netip.Addr, 0, len(in))
	for i, s := range in {
		if a, ok := parseAddr(fmt.Sprintf("%s[%d]", field, i), s, errs); ok {
			out = append(out, a)
		}
	}
	return out
}

func parseSubnet(field, s string, errs *FieldErrors) netip.Prefix {
	p, err := netip.ParsePrefix(strings.TrimSpace(s))
	if err != nil {
		errs.add(field, "%s is not a subnet; write it as address/length, like 10.0.0.0/24", s)
		return netip.Prefix{}
	}
	if p.Addr().Is4In6() && p.Bits() < 96 {
		errs.add(field, "%s mixes IPv4 and IPv6; write the IPv4 subnet, like 10.0.0.0/24", s)
		return netip.Prefix{}
	}
	// Upstream (net.ParseCIDR) accepts host bits and masks them off; so do we.
	return netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-unmapShift(p.Addr())).Masked()
}

// unmapShift is how many bits a prefix loses when its IPv4-mapped IPv6 address becomes IPv4.
func unmapShift(a netip.Addr) int {
	if a.Is4In6() {
		return 96
	}
	return 0
}

// parseExcluded reads "a", "a-b" or a CIDR into the first and last address it covers.
func parseExcluded(s string) (netip.Addr, netip.Addr, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil || (p.Addr().Is4In6() && p.Bits() < 96) {
			return netip.Addr{}, netip.Addr{}, fmt.Errorf("%q is not a CIDR; write it like 10.0.0.0/28", s)
		}
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-unmapShift(p.Addr())).Masked()
		last := u128ToAddr(addrToU128(p.Addr()).or(hostMask(p.Addr().BitLen(), p.Bits())), p.Addr().Is4())
		return p.Addr(), last, nil
	}
	from, to, isRange := strings.Cut(s, "-")
	first, err := netip.ParseAddr(strings.TrimSpace(from))
	if err != nil || first.Zone() != "" {
		return netip.Addr{}, netip.Addr{}, fmt.Errorf("%q is not an address, a range a-b, or a CIDR", s)
	}
	first = first.Unmap()
	if !isRange {
		return first, first, nil
	}
	last, err := netip.ParseAddr(strings.TrimSpace(to))
	if err != nil || last.Zone() != "" {
		return netip.Addr{}, netip.Addr{}, fmt.Errorf("%q: %q is not an IP address", s, strings.TrimSpace(to))
	}
	last = last.Unmap()
	if first.Is4() != last.Is4() {
		return netip.Addr{}, netip.Addr{}, fmt.Errorf("%q mixes IPv4 and IPv6", s)
	}
	if last.Less(first) {
		return netip.Addr{}, netip.Addr{}, fmt.Errorf("%q ends before it starts; swap the two addresses", s)
	}
	return first, last, nil
}

func family(is4 bool) string {
	if is4 {
		return "IPv4"
	}
	return "IPv6"
}
