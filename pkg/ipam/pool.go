package ipam

import (
	"fmt"
	"math"
	"math/big"
	"net/netip"
	"slices"
	"strconv"
	"time"
)

// Pool is a parsed, valid IPPool spec: the addresses it may hand out, in order. It is immutable;
// an edit of the IPPool gives a new Pool (see Index.Reconfigure).
type Pool struct {
	Strategy         Strategy
	ReuseGracePeriod time.Duration
	// Entries are the ranges of spec.pools in their order, with defaults applied.
	Entries []Entry
	// PreAllocations pins claim names to addresses, all inside the pool.
	PreAllocations map[string]netip.Addr

	is4        bool
	entryIndex []int // entryIndex[i] is the index in spec.pools of Entries[i]

	// segments are the runs of allocatable addresses in sequential order (entry by entry, each
	// minus its exclusions). A run's offset is the number of addresses before it, so an address's
	// position in the pool is offset + (address - first): positions 0..total-1 number the
	// allocatable addresses with no holes, which is what the index counts and draws from.
	segments []segment
	byAddr   []int // indexes into segments, sorted by address
	total    u128

	exclusions []exclusion // unmerged, to tell a user why an address is not in the pool
}

// Entry is one range of a pool with everything an IPAddress needs besides the address itself.
type Entry struct {
	// Index is the entry's position in spec.pools.
	Index       int
	First, Last netip.Addr
	// Subnet is the entry's subnet when it gives one; zero otherwise.
	Subnet     netip.Prefix
	Prefix     int
	Gateway    netip.Addr // zero when none
	DNSServers []netip.Addr
}

type segment struct {
	first, last, offset u128
	entry               int
}

// Count is a number of addresses. An IPv6 /64 holds 2^64 of them, more than an int64, so counts
// are exact up to 2^128-1; Int64 saturates for fields that cannot hold more.
type Count struct{ v u128 }

// IsZero reports whether the count is 0.
func (c Count) IsZero() bool { return c.v.isZero() }

// Big returns the exact count.
func (c Count) Big() *big.Int { return c.v.big() }

// Int64 returns the count, or math.MaxInt64 when it is larger (a /64 or bigger).
func (c Count) Int64() int64 {
	if c.v.hi != 0 || c.v.lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(c.v.lo)
}

func (c Count) String() string {
	if c.v.hi == 0 {
		return strconv.FormatUint(c.v.lo, 10)
	}
	return c.v.big().String()
}

// Size is the number of addresses the pool can hand out.
func (p *Pool) Size() Count { return Count{p.total} }

// Is4 reports whether the pool holds IPv4 addresses (an empty pool reports IPv4).
func (p *Pool) Is4() bool { return p.is4 || len(p.Entries) == 0 }

// Contains reports whether addr may be handed out: inside a range, not excluded, not a gateway,
// not a network or broadcast address.
func (p *Pool) Contains(addr netip.Addr) bool {
	_, ok := p.position(addr)
	return ok
}

// Entry returns the entry whose range holds addr, for the prefix, gateway and DNS servers of an
// IPAddress.
func (p *Pool) Entry(addr netip.Addr) (Entry, bool) {
	addr = addr.Unmap()
	for _, e := range p.Entries {
		if !addr.Less(e.First) && !e.Last.Less(addr) {
			return e, true
		}
	}
	return Entry{}, false
}

// buildSegments cuts each entry's range around the exclusions and numbers what is left.
func (p *Pool) buildSegments(excl []exclusion) *FieldError {
	p.exclusions = excl
	merged := mergeExclusions(excl)
	var total u128
	emit := func(first, last u128, entry int) bool {
		p.segments = append(p.segments, segment{first: first, last: last, offset: total, entry: entry})
		size, over := last.sub(first).add(u64(1))
		if !over {
			total, over = total.add(size)
		}
		return !over
	}
	for i := range p.Entries {
		p.Entries[i].Index = p.entryIndex[i]
		first, last := addrToU128(p.Entries[i].First), addrToU128(p.Entries[i].Last)
		cur, done := first, false
		k, _ := slices.BinarySearchFunc(merged, first, func(x exclusion, v u128) int { return x.last.cmp(v) })
		for ; k < len(merged) && merged[k].first.cmp(last) <= 0 && !done; k++ {
			x := merged[k]
			if x.first.cmp(cur) > 0 && !emit(cur, x.first.subU64(1), i) {
				return tooBig()
			}
			if x.last.cmp(last) >= 0 {
				done = true
			} else {
				cur = x.last.addU64(1)
			}
		}
		if !done && !emit(cur, last, i) {
			return tooBig()
		}
	}
	p.total = total
	p.byAddr = make([]int, len(p.segments))
	for i := range p.byAddr {
		p.byAddr[i] = i
	}
	slices.SortFunc(p.byAddr, func(a, b int) int { return p.segments[a].first.cmp(p.segments[b].first) })
	return nil
}

func tooBig() *FieldError {
	return &FieldError{Field: "pools", Detail: "spans the whole IPv6 address space; narrow the ranges"}
}

func mergeExclusions(excl []exclusion) []exclusion {
	sorted := slices.Clone(excl)
	slices.SortFunc(sorted, func(a, b exclusion) int { return a.first.cmp(b.first) })
	var out []exclusion
	for _, x := range sorted {
		if n := len(out); n > 0 {
			prev := &out[n-1]
			// Adjacent spans merge too: prev.last+1 == x.first.
			if next, over := prev.last.add(u64(1)); over || x.first.cmp(next) <= 0 {
				if x.last.cmp(prev.last) > 0 {
					prev.last = x.last
				}
				continue
			}
		}
		out = append(out, x)
	}
	return out
}

// position is addr's number among the pool's allocatable addresses.
func (p *Pool) position(addr netip.Addr) (u128, bool) {
	addr = addr.Unmap()
	if !addr.IsValid() || addr.Is4() != p.is4 || len(p.segments) == 0 {
		return u128{}, false
	}
	v := addrToU128(addr)
	// The last segment starting at or before v is the only one that can hold it.
	k, found := slices.BinarySearchFunc(p.byAddr, v, func(i int, v u128) int { return p.segments[i].first.cmp(v) })
	if !found {
		if k == 0 {
			return u128{}, false
		}
		k--
	}
	s := p.segments[p.byAddr[k]]
	if v.cmp(s.last) > 0 {
		return u128{}, false
	}
	pos, _ := s.offset.add(v.sub(s.first))
	return pos, true
}

// addrAt is the inverse of position, for pos < total.
func (p *Pool) addrAt(pos u128) netip.Addr {
	k, found := slices.BinarySearchFunc(p.segments, pos, func(s segment, pos u128) int { return s.offset.cmp(pos) })
	if !found {
		k--
	}
	s := p.segments[k]
	v, _ := s.first.add(pos.sub(s.offset))
	return u128ToAddr(v, p.is4)
}

// whyNotIn explains, for an error message, why addr is not an address of the pool.
func (p *Pool) whyNotIn(addr netip.Addr) string {
	addr = addr.Unmap()
	if !addr.IsValid() {
		return "no valid address was given"
	}
	if len(p.Entries) == 0 {
		return fmt.Sprintf("%s is not in the pool: spec.pools is empty", addr)
	}
	if addr.Is4() != p.is4 {
		return fmt.Sprintf("%s is %s but the pool is %s", addr, family(addr.Is4()), family(p.is4))
	}
	if _, ok := p.Entry(addr); !ok {
		return fmt.Sprintf("%s is outside every range of spec.pools (%s)", addr, p.describeRanges())
	}
	v := addrToU128(addr)
	for _, x := range p.exclusions {
		if x.first.cmp(v) <= 0 && v.cmp(x.last) <= 0 {
			return fmt.Sprintf("%s is %s", addr, x.why)
		}
	}
	return fmt.Sprintf("%s is not in the pool", addr)
}

func (p *Pool) describeRanges() string {
	const shown = 3
	out := ""
	for i, e := range p.Entries {
		if i == shown {
			return out + fmt.Sprintf(", and %d more", len(p.Entries)-shown)
		}
		if i > 0 {
			out += ", "
		}
		if e.Subnet.IsValid() && e.First == e.Subnet.Addr() && e.Last == u128ToAddr(addrToU128(e.First).or(hostMask(e.First.BitLen(), e.Subnet.Bits())), p.is4) {
			out += e.Subnet.String()
		} else {
			out += e.First.String() + "-" + e.Last.String()
		}
	}
	return out
}
