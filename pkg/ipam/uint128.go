package ipam

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/bits"
	"net/netip"
)

// u128 is an unsigned 128-bit integer: an IPv6 address, or a count or position in a pool that may
// span a whole IPv6 subnet. big.Int would do, but it allocates on every step of the hot path.
type u128 struct{ hi, lo uint64 }

func u64(v uint64) u128 { return u128{lo: v} }

var maxU128 = u128{hi: math.MaxUint64, lo: math.MaxUint64}

func (a u128) cmp(b u128) int {
	switch {
	case a.hi < b.hi:
		return -1
	case a.hi > b.hi:
		return 1
	case a.lo < b.lo:
		return -1
	case a.lo > b.lo:
		return 1
	}
	return 0
}

func (a u128) isZero() bool { return a.hi == 0 && a.lo == 0 }

// add returns a+b and whether it overflowed.
func (a u128) add(b u128) (u128, bool) {
	lo, carry := bits.Add64(a.lo, b.lo, 0)
	hi, carry := bits.Add64(a.hi, b.hi, carry)
	return u128{hi: hi, lo: lo}, carry != 0
}

// sub returns a-b; callers guarantee a >= b.
func (a u128) sub(b u128) u128 {
	lo, borrow := bits.Sub64(a.lo, b.lo, 0)
	hi, _ := bits.Sub64(a.hi, b.hi, borrow)
	return u128{hi: hi, lo: lo}
}

func (a u128) addU64(v uint64) u128 { s, _ := a.add(u64(v)); return s }
func (a u128) subU64(v uint64) u128 { return a.sub(u64(v)) }

func (a u128) big() *big.Int {
	b := new(big.Int).SetUint64(a.hi)
	b.Lsh(b, 64)
	return b.Or(b, new(big.Int).SetUint64(a.lo))
}

// addrToU128 reads an address as a number: IPv4 in the low 32 bits, IPv6 in all 128.
func addrToU128(a netip.Addr) u128 {
	b := a.As16()
	return u128{
		hi: binary.BigEndian.Uint64(b[:8]),
		lo: binary.BigEndian.Uint64(b[8:]),
	}.maskFamily(a.Is4())
}

func (a u128) maskFamily(is4 bool) u128 {
	if is4 {
		return u128{lo: a.lo & math.MaxUint32}
	}
	return a
}

// u128ToAddr is the inverse of addrToU128 for the given family.
func u128ToAddr(v u128, is4 bool) netip.Addr {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], v.hi)
	binary.BigEndian.PutUint64(b[8:], v.lo)
	if is4 {
		// ::ffff:a.b.c.d unmaps to a.b.c.d.
		b[10], b[11] = 0xff, 0xff
		return netip.AddrFrom16(b).Unmap()
	}
	return netip.AddrFrom16(b)
}

// hostMask is the value with the low (bits - prefix) bits set: OR it onto a network address to
// get the last address of the prefix.
func hostMask(bitLen, prefix int) u128 {
	hostBits := bitLen - prefix
	switch {
	case hostBits <= 0:
		return u128{}
	case hostBits >= 128:
		return maxU128
	case hostBits >= 64:
		return u128{hi: 1<<(hostBits-64) - 1, lo: math.MaxUint64}
	default:
		return u128{lo: 1<<hostBits - 1}
	}
}

func (a u128) or(b u128) u128 { return u128{hi: a.hi | b.hi, lo: a.lo | b.lo} }

// randBelow draws uniformly from [0, n) with n > 0, using rejection sampling above 2^64 so that
// every free address of a /64 is equally likely.
func randBelow(r Source, n u128) u128 {
	if n.hi == 0 {
		return u64(r.Uint64N(n.lo))
	}
	hiMask := uint64(math.MaxUint64) >> bits.LeadingZeros64(n.hi)
	for {
		v := u128{hi: r.Uint64() & hiMask, lo: r.Uint64()}
		if v.cmp(n) < 0 {
			return v
		}
	}
}
