package ipam

import (
	"errors"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestSequentialHandsOutRangeOrderSkippingWhatIsNeverFree(t *testing.T) {
	g := NewWithT(t)
	p := mustParse(t, Spec{
		Prefix:            24,
		Gateway:           "10.0.1.11",
		ExcludedAddresses: []string{"10.0.1.13", "10.0.0.2/31"},
		Pools: []Range{
			{Start: "10.0.1.10", End: "10.0.1.14"},
			{Subnet: "10.0.0.0/29", Gateway: "10.0.0.1"},
		},
	})
	idx := NewIndex(p, nil)
	got := allocateAll(g, idx, "claim", 6)
	g.Expect(got).To(Equal(addrs(
		"10.0.1.10", "10.0.1.12", "10.0.1.14", // gateway .11 and excluded .13 skipped
		"10.0.0.4", "10.0.0.5", "10.0.0.6", // network, own gateway, excluded .2-.3, broadcast skipped
	)))

	_, err := idx.Allocate("one-too-many", t0)
	g.Expect(errors.Is(err, ErrPoolExhausted)).To(BeTrue())
	g.Expect(err).To(MatchError("pool has 6 addresses, all in use: add a range to spec.pools or release addresses"))
}

func TestExhaustedMessageForA24(t *testing.T) {
	g := NewWithT(t)
	idx := NewIndex(mustParse(t, subnet24()), nil)
	allocateAll(g, idx, "m", 254)
	_, err := idx.Allocate("m-254", t0)
	g.Expect(err).To(MatchError("pool has 254 addresses, all in use: add a range to spec.pools or release addresses"))

	empty := NewIndex(mustParse(t, Spec{}), nil)
	_, err = empty.Allocate("m", t0)
	g.Expect(errors.Is(err, ErrPoolExhausted)).To(BeTrue())
	g.Expect(err).To(MatchError("pool has no address to hand out: add a range to spec.pools (or remove exclusions)"))
}

func TestAllocateIsIdempotentPerOwner(t *testing.T) {
	g := NewWithT(t)
	idx := NewIndex(mustParse(t, subnet24()), nil)
	first, err := idx.Allocate("claim-a", t0)
	g.Expect(err).NotTo(HaveOccurred())
	again, err := idx.Allocate("claim-a", t0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(first))
	g.Expect(idx.AllocateSpecific("claim-a", first, t0)).To(Succeed())
	g.Expect(idx.Stats(t0).Allocated).To(Equal(1))

	other, _ := idx.Allocate("claim-b", t0)
	g.Expect(other).NotTo(Equal(first))
}

func TestReleaseMakesTheLowestAddressFreeAgain(t *testing.T) {
	g := NewWithT(t)
	idx := NewIndex(mustParse(t, subnet24()), nil)
	allocateAll(g, idx, "m", 5)
	owner, ok := idx.Release(addr("10.0.0.2"), t0)
	g.Expect(ok).To(BeTrue())
	g.Expect(owner).To(Equal("m-1"))
	_, ok = idx.Release(addr("10.0.0.2"), t0)
	g.Expect(ok).To(BeFalse(), "a repeated delete event is a no-op")

	a, _ := idx.Allocate("new", t0)
	g.Expect(a).To(Equal(addr("10.0.0.2")))
	b, _ := idx.Allocate("newer", t0)
	g.Expect(b).To(Equal(addr("10.0.0.6")))
}

func TestReuseGracePeriod(t *testing.T) {
	spec := Spec{ReuseGracePeriod: time.Minute, Pools: []Range{{Subnet: "10.0.0.0/29"}}}
	released := addr("10.0.0.1")
	tests := []struct {
		name  string
		owner string
		at    time.Duration // after the release
		want  string
	}{
		{name: "another owner within the grace period gets a different address", owner: "other", at: 59 * time.Second, want: "10.0.0.4"},
		{name: "another owner at releasedAt+grace gets it", owner: "other", at: time.Minute, want: "10.0.0.1"},
		{name: "the owner that released it gets it back at once", owner: "m-0", at: time.Second, want: "10.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			idx := NewIndex(mustParse(t, spec), nil)
			allocateAll(g, idx, "m", 3)
			idx.Release(released, t0)
			got, err := idx.Allocate(tt.owner, t0.Add(tt.at))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(addr(tt.want)))
		})
	}
}

func TestReuseGracePeriodWhenThePoolIsFull(t *testing.T) {
	g := NewWithT(t)
	idx := NewIndex(mustParse(t, Spec{ReuseGracePeriod: time.Minute, Pools: []Range{{Subnet: "10.0.0.0/30"}}}), nil)
	allocateAll(g, idx, "m", 2)
	idx.Release(addr("10.0.0.2"), t0)

	st := idx.Stats(t0.Add(time.Second))
	g.Expect(st.Cooling).To(Equal(1))
	g.Expect(st.Free.IsZero()).To(BeTrue())

	_, err := idx.Allocate("other", t0.Add(time.Second))
	var exhausted *ExhaustedError
	g.Expect(errors.As(err, &exhausted)).To(BeTrue())
	g.Expect(exhausted.NextFree).To(Equal(t0.Add(time.Minute)), "a controller requeues at NextFree")
	g.Expect(err).To(MatchError("pool has 2 addresses, all in use: add a range to spec.pools or release addresses; " +
		"1 released addresses become free again from 2026-01-02T03:05:05Z (reuseGracePeriod)"))

	err = idx.AllocateSpecific("other", addr("10.0.0.2"), t0.Add(time.Second))
	g.Expect(errors.Is(err, ErrCooling)).To(BeTrue())
	g.Expect(err).To(MatchError(`10.0.0.2 was released by "m-1" and may be reused from 2026-01-02T03:05:05Z (reuseGracePeriod); ask for another address or retry then`))

	a, err := idx.Allocate("other", t0.Add(time.Minute))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(a).To(Equal(addr("10.0.0.2")))
	g.Expect(idx.Stats(t0.Add(time.Minute)).Cooling).To(Equal(0))
}

func TestObserveReleaseAfterARestart(t *testing.T) {
	g := NewWithT(t)
	p := mustParse(t, Spec{ReuseGracePeriod: time.Minute, Pools: []Range{{Subnet: "10.0.0.0/29"}}})
	idx, err := Rebuild(p, []Allocation{{Owner: "a", Addr: addr("10.0.0.2")}}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	idx.ObserveRelease("gone", addr("10.0.0.1"), t0)
	idx.ObserveRelease("a", addr("10.0.0.2"), t0)    // held again: ignored
	idx.ObserveRelease("x", addr("192.168.0.1"), t0) // not in the pool: ignored

	got, _ := idx.Allocate("new", t0.Add(30*time.Second))
	g.Expect(got).To(Equal(addr("10.0.0.3")), "10.0.0.1 still cools after the restart")
	back, _ := idx.Allocate("gone", t0.Add(30*time.Second))
	g.Expect(back).To(Equal(addr("10.0.0.1")), "its last owner may have it back")
	g.Expect(idx.Stats(t0.Add(30 * time.Second)).Cooling).To(Equal(0))
}

func TestForgetSkipsTheGracePeriod(t *testing.T) {
	g := NewWithT(t)
	idx := NewIndex(mustParse(t, Spec{ReuseGracePeriod: time.Hour, Pools: []Range{{Subnet: "10.0.0.0/30"}}}), nil)
	a, _ := idx.Allocate("m", t0)
	owner, ok := idx.Forget(a)
	g.Expect(ok).To(BeTrue())
	g.Expect(owner).To(Equal("m"))
	b, err := idx.Allocate("other", t0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(b).To(Equal(a))
}

func TestAllocateSpecific(t *testing.T) {
	spec := Spec{
		Gateway:           "10.0.0.1",
		ExcludedAddresses: []string{"10.0.0.200/29"},
		PreAllocations:    map[string]string{"pinned": "10.0.0.50"},
		Pools:             []Range{{Subnet: "10.0.0.0/24"}},
	}
	tests := []struct {
		name    string
		owner   string
		given   string
		wantIs  error
		wantMsg string
	}{
		{name: "a free address", owner: "c", given: "10.0.0.77"},
		{name: "the address the owner holds already", owner: "holder", given: "10.0.0.2"},
		{name: "the pinned owner asking for its pin", owner: "pinned", given: "10.0.0.50"},
		{
			name: "held by another owner", owner: "c", given: "10.0.0.2", wantIs: ErrAddressTaken,
			wantMsg: `10.0.0.2 is allocated to "holder"; ask for another address`,
		},
		{
			name: "pinned to another claim", owner: "c", given: "10.0.0.50", wantIs: ErrAddressTaken,
			wantMsg: `10.0.0.50 is reserved for claim "pinned" by spec.preAllocations; ask for another address`,
		},
		{
			name: "outside the pool", owner: "c", given: "10.0.1.1", wantIs: ErrNotInPool,
			wantMsg: "10.0.1.1 is outside every range of spec.pools (10.0.0.0/24); ask for an address of the pool",
		},
		{
			name: "excluded", owner: "c", given: "10.0.0.203", wantIs: ErrNotInPool,
			wantMsg: "10.0.0.203 is excluded by excludedAddresses[0]; ask for an address of the pool",
		},
		{
			name: "the gateway", owner: "c", given: "10.0.0.1", wantIs: ErrNotInPool,
			wantMsg: "10.0.0.1 is the gateway of pools[0]; ask for an address of the pool",
		},
		{
			name: "the network address", owner: "c", given: "10.0.0.0", wantIs: ErrNotInPool,
			wantMsg: "10.0.0.0 is the network address of 10.0.0.0/24 (pools[0]); ask for an address of the pool",
		},
		{
			name: "the other family", owner: "c", given: "fd00::1", wantIs: ErrNotInPool,
			wantMsg: "fd00::1 is IPv6 but the pool is IPv4; ask for an address of the pool",
		},
		{
			name: "no address", owner: "c", given: "", wantIs: ErrNotInPool,
			wantMsg: "no valid address was given; ask for an address of the pool",
		},
		{
			name: "an owner that holds another address", owner: "holder", given: "10.0.0.9", wantIs: ErrOwnerConflict,
			wantMsg: `claim "holder" already holds 10.0.0.2; release it before asking for 10.0.0.9`,
		},
		{
			name: "a pinned owner asking for another address", owner: "pinned", given: "10.0.0.9", wantIs: ErrOwnerConflict,
			wantMsg: `claim "pinned" asks for 10.0.0.9 but spec.preAllocations pins it to 10.0.0.50; drop the request or change preAllocations`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			idx := NewIndex(mustParse(t, spec), nil)
			_, err := idx.Allocate("holder", t0)
			g.Expect(err).NotTo(HaveOccurred())

			var requested netip.Addr
			if tt.given != "" {
				requested = addr(tt.given)
			}
			err = idx.AllocateSpecific(tt.owner, requested, t0)
			if tt.wantIs == nil {
				g.Expect(err).NotTo(HaveOccurred())
				got, _ := idx.Lookup(tt.owner)
				g.Expect(got).To(Equal(addr(tt.given)))
				return
			}
			g.Expect(errors.Is(err, tt.wantIs)).To(BeTrue(), "%v", err)
			g.Expect(err).To(MatchError(tt.wantMsg))
			if tt.owner == "c" {
				_, holds := idx.Lookup("c")
				g.Expect(holds).To(BeFalse(), "a refused request takes nothing")
			}
		})
	}
}

func TestPreAllocations(t *testing.T) {
	g := NewWithT(t)
	p := mustParse(t, Spec{
		Pools:          []Range{{Subnet: "10.0.0.0/29"}},
		PreAllocations: map[string]string{"host-a": "10.0.0.1", "host-b": "10.0.0.4"},
	})
	idx := NewIndex(p, nil)
	st := idx.Stats(t0)
	g.Expect(st.Reserved).To(Equal(2))
	g.Expect(st.Free.Int64()).To(BeEquivalentTo(4))

	// Other claims never get a pinned address, even when it is the lowest.
	got := allocateAll(g, idx, "m", 4)
	g.Expect(got).To(Equal(addrs("10.0.0.2", "10.0.0.3", "10.0.0.5", "10.0.0.6")))
	_, err := idx.Allocate("m-4", t0)
	g.Expect(errors.Is(err, ErrPoolExhausted)).To(BeTrue())

	// The pinned claim gets its address when it asks.
	a, err := idx.Allocate("host-b", t0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(a).To(Equal(addr("10.0.0.4")))
	st = idx.Stats(t0)
	g.Expect(st.Allocated).To(Equal(5))
	g.Expect(st.Reserved).To(Equal(1))

	// Released, it stays kept for its claim.
	idx.Release(a, t0)
	_, err = idx.Allocate("m-4", t0)
	g.Expect(errors.Is(err, ErrPoolExhausted)).To(BeTrue())
	a, _ = idx.Allocate("host-b", t0)
	g.Expect(a).To(Equal(addr("10.0.0.4")))
}

func TestPreAllocationHeldByAnotherOwner(t *testing.T) {
	g := NewWithT(t)
	p := mustParse(t, Spec{Pools: []Range{{Subnet: "10.0.0.0/29"}}, PreAllocations: map[string]string{"host-a": "10.0.0.3"}})
	// The cache shows 10.0.0.3 held by another claim (say, the pin was added later).
	idx, err := Rebuild(p, []Allocation{{Owner: "squatter", Addr: addr("10.0.0.3")}}, nil)
	g.Expect(err).NotTo(HaveOccurred())

	_, err = idx.Allocate("host-a", t0)
	g.Expect(errors.Is(err, ErrAddressTaken)).To(BeTrue())
	g.Expect(err).To(MatchError(`10.0.0.3 is pinned to claim "host-a" by spec.preAllocations but held by "squatter"; release that address or change preAllocations`))

	idx.Release(addr("10.0.0.3"), t0)
	a, err := idx.Allocate("host-a", t0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(a).To(Equal(addr("10.0.0.3")))
}

func TestReserve(t *testing.T) {
	g := NewWithT(t)
	idx := NewIndex(mustParse(t, Spec{Gateway: "10.0.0.1", Pools: []Range{{Subnet: "10.0.0.0/29"}}}), nil)
	g.Expect(idx.Reserve("a", addr("10.0.0.2"))).To(Succeed())
	err := idx.Reserve("b", addr("10.0.0.2"))
	g.Expect(errors.Is(err, ErrAddressTaken)).To(BeTrue())
	g.Expect(err).To(MatchError(`10.0.0.2 is already pinned to claim "a"`))
	err = idx.Reserve("b", addr("10.0.0.1"))
	g.Expect(errors.Is(err, ErrNotInPool)).To(BeTrue())
	g.Expect(err).To(MatchError("10.0.0.1 is the gateway of pools[0]; pin an address of the pool"))

	// Moving a pin frees the old address.
	g.Expect(idx.Reserve("a", addr("10.0.0.6"))).To(Succeed())
	next, _ := idx.Allocate("c", t0)
	g.Expect(next).To(Equal(addr("10.0.0.2")))
}

func TestRebuild(t *testing.T) {
	g := NewWithT(t)
	p := mustParse(t, subnet24())
	existing := []Allocation{
		{Owner: "a", Addr: addr("10.0.0.1")},
		{Owner: "b", Addr: addr("10.0.0.2")},
		{Owner: "c", Addr: addr("10.0.0.4")},
		{Owner: "a", Addr: addr("10.0.0.1")}, // the same event twice
		{Owner: "d", Addr: addr("10.0.0.2")}, // a second owner of one address
		{Owner: "c", Addr: addr("10.0.0.9")}, // a second address of one owner
		{Owner: "old", Addr: addr("10.0.7.7")},
	}
	existing = append(existing, Allocation{Owner: "broken"})
	idx, err := Rebuild(p, existing, nil)
	g.Expect(err).To(MatchError(`10.0.0.2 is recorded for both "b" and "d"; delete one of the two IPAddresses` + "\n" +
		`claim "c" holds both 10.0.0.4 and 10.0.0.9; delete one of the two IPAddresses` + "\n" +
		`claim "broken" has an IPAddress without a valid address; fix or delete it`))
	g.Expect(idx).NotTo(BeNil())

	st := idx.Stats(t0)
	g.Expect(st.Allocated).To(Equal(3))
	g.Expect(st.OutOfRange).To(Equal(1))
	g.Expect(idx.OutOfRange()).To(Equal([]Allocation{{Owner: "old", Addr: addr("10.0.7.7")}}))

	// The rebuilt index continues where the cluster left off.
	got := allocateAll(g, idx, "new", 2)
	g.Expect(got).To(Equal(addrs("10.0.0.3", "10.0.0.5")))
	a, _ := idx.Allocate("b", t0)
	g.Expect(a).To(Equal(addr("10.0.0.2")))
}

func TestOutOfRangeAfterAnEdit(t *testing.T) {
	g := NewWithT(t)
	before := mustParse(t, Spec{Prefix: 24, Pools: []Range{{Start: "10.0.0.10", End: "10.0.0.19"}}})
	idx := NewIndex(before, nil)
	allocateAll(g, idx, "m", 6) // .10-.15

	after := mustParse(t, Spec{
		Prefix:            24,
		ExcludedAddresses: []string{"10.0.0.13"},
		Pools:             []Range{{Start: "10.0.0.12", End: "10.0.0.29"}},
	})
	idx.Reconfigure(after)
	st := idx.Stats(t0)
	g.Expect(st.OutOfRange).To(Equal(3), ".10 and .11 are outside the range, .13 is now excluded")
	g.Expect(st.Allocated).To(Equal(3))
	g.Expect(st.Total.Int64()).To(BeEquivalentTo(17))
	g.Expect(st.Free.Int64()).To(BeEquivalentTo(14))
	g.Expect(idx.OutOfRange()).To(Equal([]Allocation{
		{Owner: "m-0", Addr: addr("10.0.0.10")}, {Owner: "m-1", Addr: addr("10.0.0.11")}, {Owner: "m-3", Addr: addr("10.0.0.13")},
	}))

	// Owners keep what they have; new claims start after the addresses still held.
	a, _ := idx.Allocate("m-0", t0)
	g.Expect(a).To(Equal(addr("10.0.0.10")))
	n, _ := idx.Allocate("new", t0)
	g.Expect(n).To(Equal(addr("10.0.0.16")))

	idx.Release(addr("10.0.0.10"), t0)
	g.Expect(idx.Stats(t0).OutOfRange).To(Equal(2))
}

func TestRandomStrategy(t *testing.T) {
	spec := Spec{Strategy: Random, Gateway: "10.0.0.1", Pools: []Range{{Subnet: "10.0.0.0/27"}}, ExcludedAddresses: []string{"10.0.0.8-10.0.0.15"}}

	t.Run("deterministic with a seeded source", func(t *testing.T) {
		g := NewWithT(t)
		a := NewIndex(mustParse(t, spec), rand.New(rand.NewPCG(1, 2)))
		b := NewIndex(mustParse(t, spec), rand.New(rand.NewPCG(1, 2)))
		g.Expect(allocateAll(g, a, "m", 10)).To(Equal(allocateAll(g, b, "m", 10)))
	})

	t.Run("fills the pool with every allocatable address once", func(t *testing.T) {
		g := NewWithT(t)
		p := mustParse(t, spec)
		idx := NewIndex(p, rand.New(rand.NewPCG(3, 4)))
		got := allocateAll(g, idx, "m", int(p.Size().Int64()))
		g.Expect(got).To(ConsistOf(enumerate(p)))
		g.Expect(got).NotTo(Equal(enumerate(p)), "not handed out in order")
		_, err := idx.Allocate("extra", t0)
		g.Expect(errors.Is(err, ErrPoolExhausted)).To(BeTrue())
	})

	t.Run("uniform over the free addresses", func(t *testing.T) {
		g := NewWithT(t)
		p := mustParse(t, spec)
		rnd := rand.New(rand.NewPCG(5, 6))
		held := addrs("10.0.0.2", "10.0.0.3", "10.0.0.20")
		free := map[netip.Addr]bool{}
		for _, a := range enumerate(p) {
			free[a] = true
		}
		for _, h := range held {
			delete(free, h)
		}
		const draws = 40000
		counts := map[netip.Addr]int{}
		for range draws {
			idx := NewIndex(p, rnd)
			for i, h := range held {
				g.Expect(idx.AllocateSpecific(owner("held", i), h, t0)).To(Succeed())
			}
			a, err := idx.Allocate("x", t0)
			g.Expect(err).NotTo(HaveOccurred())
			counts[a]++
		}
		g.Expect(counts).To(HaveLen(len(free)), "every free address, and only those, is drawn")
		want := draws / len(free)
		for a, n := range counts {
			g.Expect(free[a]).To(BeTrue(), "%s is not free", a)
			g.Expect(n).To(BeNumerically("~", want, want/5), "%s drawn %d times, want about %d", a, n, want)
		}
	})
}

func TestIPv6(t *testing.T) {
	t.Run("sequential in a /64", func(t *testing.T) {
		g := NewWithT(t)
		idx := NewIndex(mustParse(t, Spec{Pools: []Range{{Subnet: "2001:db8:1::/64", Gateway: "2001:db8:1::1"}}}), nil)
		g.Expect(allocateAll(g, idx, "m", 3)).To(Equal(addrs("2001:db8:1::2", "2001:db8:1::3", "2001:db8:1::4")))
		st := idx.Stats(t0)
		g.Expect(st.Free.String()).To(Equal("18446744073709551611")) // 2^64 - 1 network - 1 gateway - 3
	})

	t.Run("random in a /48 spreads over the high bits", func(t *testing.T) {
		g := NewWithT(t)
		prefix := netip.MustParsePrefix("2001:db8:2::/48")
		idx := NewIndex(mustParse(t, Spec{Strategy: Random, Pools: []Range{{Subnet: prefix.String()}}}), rand.New(rand.NewPCG(7, 8)))
		got := allocateAll(g, idx, "m", 200)
		seen := map[netip.Addr]bool{}
		highBits := map[uint16]bool{}
		for _, a := range got {
			g.Expect(prefix.Contains(a)).To(BeTrue())
			g.Expect(seen[a]).To(BeFalse())
			seen[a] = true
			b := a.As16()
			highBits[uint16(b[6])<<8|uint16(b[7])] = true // the 4th group: above 2^64
		}
		g.Expect(len(highBits)).To(BeNumerically(">", 150), "draws cover the whole /48, not just its low 64 bits")
	})
}

func TestStatsAddUp(t *testing.T) {
	g := NewWithT(t)
	p := mustParse(t, Spec{
		ReuseGracePeriod: time.Minute,
		PreAllocations:   map[string]string{"pin": "10.0.0.9"},
		Pools:            []Range{{Subnet: "10.0.0.0/28"}},
	})
	idx := NewIndex(p, nil)
	allocateAll(g, idx, "m", 5)
	idx.Release(addr("10.0.0.1"), t0)
	g.Expect(idx.Observe("old", addr("192.168.0.1"))).To(Succeed())

	st := idx.Stats(t0)
	g.Expect(st).To(Equal(Stats{
		Total: p.Size(), Free: Count{u64(14 - 6)},
		Used: 6, Allocated: 4, Reserved: 1, Cooling: 1, OutOfRange: 1,
	}))
	g.Expect(idx.Allocations()).To(HaveLen(5))
	g.Expect(idx.Held()).To(Equal(5), "4 in the pool and 1 outside")
}
