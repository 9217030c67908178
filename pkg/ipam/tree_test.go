package ipam

import (
	"math/rand/v2"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
)

// TestTakenSetAgainstASortedSlice drives the treap and a plain sorted slice with the same random
// inserts and removes, and compares every answer the index relies on.
func TestTakenSetAgainstASortedSlice(t *testing.T) {
	g := NewWithT(t)
	rnd := rand.New(rand.NewPCG(9, 10))
	set := newTakenSet()
	var model []uint64
	const space = 300
	for step := range 5000 {
		key := rnd.Uint64N(space)
		i, found := slices.BinarySearch(model, key)
		if rnd.IntN(3) == 0 {
			g.Expect(set.remove(u64(key))).To(Equal(found))
			if found {
				model = slices.Delete(model, i, i+1)
			}
		} else {
			g.Expect(set.insert(u64(key))).To(Equal(!found))
			if !found {
				model = slices.Insert(model, i, key)
			}
		}
		g.Expect(set.len()).To(Equal(len(model)))
		if step%50 != 0 {
			continue
		}
		var free []uint64
		for p := uint64(0); p < space+5; p++ {
			if _, taken := slices.BinarySearch(model, p); !taken {
				free = append(free, p)
			}
		}
		g.Expect(set.lowestFree()).To(Equal(u64(free[0])), "step %d", step)
		for r, want := range free {
			g.Expect(set.nthFree(u64(uint64(r)))).To(Equal(u64(want)), "step %d, r=%d", step, r)
		}
	}
	for _, k := range model {
		g.Expect(set.remove(u64(k))).To(BeTrue())
	}
	g.Expect(set.len()).To(Equal(0))
	g.Expect(set.lowestFree()).To(Equal(u64(0)))
}

func TestTakenSetAbove64Bits(t *testing.T) {
	g := NewWithT(t)
	set := newTakenSet()
	big := u128{hi: 1, lo: 5}
	for _, k := range []u128{u64(0), u64(1), big, big.addU64(1)} {
		set.insert(k)
	}
	g.Expect(set.lowestFree()).To(Equal(u64(2)))
	// Free positions below big: all of 2..2^64+4, that is 2^64+3 of them; the next free is big+2.
	g.Expect(set.nthFree(u128{hi: 1, lo: 3})).To(Equal(big.addU64(2)))
	g.Expect(set.nthFree(u128{hi: 1, lo: 2})).To(Equal(u128{hi: 1, lo: 4}))
}

func TestU128(t *testing.T) {
	g := NewWithT(t)
	s, over := maxU128.add(u64(1))
	g.Expect(over).To(BeTrue())
	g.Expect(s).To(Equal(u128{}))
	g.Expect(u128{hi: 1}.sub(u64(1))).To(Equal(u128{lo: ^uint64(0)}))
	g.Expect(u128{hi: 1, lo: 2}.big().String()).To(Equal("18446744073709551618"))
	for _, a := range []string{"0.0.0.0", "10.1.2.3", "255.255.255.255", "::", "2001:db8::1", "ffff::ffff"} {
		v := addr(a)
		g.Expect(u128ToAddr(addrToU128(v), v.Is4())).To(Equal(v))
	}
	g.Expect(addrToU128(addr("10.0.0.1"))).To(Equal(u64(0x0a000001)))
	g.Expect(hostMask(32, 24)).To(Equal(u64(255)))
	g.Expect(hostMask(128, 64)).To(Equal(u128{lo: ^uint64(0)}))
	g.Expect(hostMask(128, 48)).To(Equal(u128{hi: 0xffff, lo: ^uint64(0)}))
}
