package ipam

import (
	"math/rand/v2"
	"net/netip"
	"slices"
	"strconv"
	"testing"
	"time"
)

// fuzzPool is a small pool with its allocatable addresses written out by hand, in sequential
// order: the oracle the fuzzer checks the index against does not share the package's arithmetic.
type fuzzPool struct {
	spec    Spec
	allowed []string
	others  []string // addresses a claim may ask for that are not allocatable
}

var fuzzPools = []fuzzPool{
	{
		spec: Spec{
			Gateway:           "10.0.0.1",
			ExcludedAddresses: []string{"10.0.0.5", "10.0.0.8-10.0.0.9"},
			PreAllocations:    map[string]string{"c3": "10.0.0.12"},
			ReuseGracePeriod:  10 * time.Second,
			Pools:             []Range{{Subnet: "10.0.0.0/28"}},
		},
		allowed: []string{"10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.6", "10.0.0.7", "10.0.0.10", "10.0.0.11", "10.0.0.12", "10.0.0.13", "10.0.0.14"},
		others:  []string{"10.0.0.0", "10.0.0.1", "10.0.0.5", "10.0.0.9", "10.0.0.15", "10.0.1.2", "fd00::2"},
	},
	{
		spec: Spec{
			Strategy: Random,
			Prefix:   24,
			Pools: []Range{
				{Start: "192.168.1.20", End: "192.168.1.23", Gateway: "192.168.1.21"},
				{Start: "192.168.1.5", End: "192.168.1.7"},
			},
			PreAllocations:   map[string]string{"c0": "192.168.1.6"},
			ReuseGracePeriod: 3 * time.Second,
		},
		allowed: []string{"192.168.1.20", "192.168.1.22", "192.168.1.23", "192.168.1.5", "192.168.1.6", "192.168.1.7"},
		others:  []string{"192.168.1.21", "192.168.1.8", "192.168.1.4"},
	},
	{
		spec: Spec{
			Gateway:           "fd00:1::1",
			ExcludedAddresses: []string{"fd00:1::4/127"},
			Pools:             []Range{{Start: "fd00:1::", End: "fd00:1::8", Subnet: "fd00:1::/64"}},
		},
		allowed: []string{"fd00:1::2", "fd00:1::3", "fd00:1::6", "fd00:1::7", "fd00:1::8"},
		others:  []string{"fd00:1::", "fd00:1::1", "fd00:1::4", "fd00:1::9", "10.0.0.2"},
	},
}

// model is the reference the fuzzer keeps: plain maps and linear scans.
type model struct {
	allowed   []netip.Addr
	held      map[netip.Addr]string
	pins      map[string]netip.Addr
	cooling   map[netip.Addr]cooldown
	coolingOf map[string]netip.Addr
}

func (m *model) ownerOf(a netip.Addr) string { return m.held[a] }

func (m *model) holds(owner string) (netip.Addr, bool) {
	for a, o := range m.held {
		if o == owner {
			return a, true
		}
	}
	return netip.Addr{}, false
}

func (m *model) pinnedTo(a netip.Addr) (string, bool) {
	for o, p := range m.pins {
		if p == a {
			return o, true
		}
	}
	return "", false
}

// available says whether owner may take a (allowed, and no one else's).
func (m *model) available(owner string, a netip.Addr) bool {
	if !slices.Contains(m.allowed, a) {
		return false
	}
	if o, ok := m.held[a]; ok && o != owner {
		return false
	}
	if o, ok := m.pinnedTo(a); ok && o != owner {
		return false
	}
	if c, ok := m.cooling[a]; ok && c.owner != owner {
		return false
	}
	return true
}

// free is what a new owner could get, in sequential order.
func (m *model) free() []netip.Addr {
	var out []netip.Addr
	for _, a := range m.allowed {
		_, held := m.held[a]
		_, pinned := m.pinnedTo(a)
		_, cooling := m.cooling[a]
		if !held && !pinned && !cooling {
			out = append(out, a)
		}
	}
	return out
}

func (m *model) assign(owner string, a netip.Addr) {
	m.held[a] = owner
	if c, ok := m.cooling[a]; ok {
		delete(m.cooling, a)
		if m.coolingOf[c.owner] == a {
			delete(m.coolingOf, c.owner)
		}
	}
}

func (m *model) expire(now time.Time) {
	for a, c := range m.cooling {
		if !c.until.After(now) {
			delete(m.cooling, a)
			if m.coolingOf[c.owner] == a {
				delete(m.coolingOf, c.owner)
			}
		}
	}
}

// FuzzIndex runs random operation sequences: the index must never hand one address to two owners,
// never hand out an excluded address or a gateway, never give a cooling address to someone else,
// follow the sequential order, and always count Free + Used == Total.
func FuzzIndex(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7})
	f.Add([]byte{1, 0, 0, 0, 3, 0, 1, 2, 0, 3, 11, 0, 5, 0, 4, 0, 1})
	f.Add([]byte{2, 0, 1, 1, 2, 1, 0, 3, 0, 4, 1, 5, 0, 6, 2, 0, 4, 20, 0, 4})
	f.Add([]byte{0, 1, 7, 1, 3, 2, 0, 0, 8, 4, 5, 0, 8, 5, 0, 6, 1, 4, 30, 0, 9})
	f.Add([]byte{1, 0, 1, 0, 2, 0, 4, 0, 5, 0, 6, 0, 7, 2, 0, 2, 1, 0, 2, 4, 2, 0, 8})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) == 0 {
			return
		}
		runFuzz(t, fuzzPools[int(ops[0])%len(fuzzPools)], ops[1:])
	})
}

func runFuzz(t *testing.T, fp fuzzPool, ops []byte) {
	pool := mustParse(t, fp.spec)
	m := &model{
		allowed: addrs(fp.allowed...), held: map[netip.Addr]string{}, pins: map[string]netip.Addr{},
		cooling: map[netip.Addr]cooldown{}, coolingOf: map[string]netip.Addr{},
	}
	for o, a := range fp.spec.PreAllocations {
		m.pins[o] = addr(a)
	}
	candidates := append(addrs(fp.allowed...), addrs(fp.others...)...)
	idx := NewIndex(pool, rand.New(rand.NewPCG(1, uint64(len(ops)))))
	now := t0
	grace := fp.spec.ReuseGracePeriod

	for len(ops) >= 2 {
		op, arg := ops[0]%7, int(ops[1])
		ops = ops[2:]
		who := "c" + strconv.Itoa(arg%8)
		m.expire(now)
		switch op {
		case 0: // allocate
			want := expectAllocate(m, who)
			got, err := idx.Allocate(who, now)
			switch {
			case err != nil && want.IsValid():
				t.Fatalf("Allocate(%s): %v; want %s", who, err, want)
			case err != nil:
				// Refused: fine when the model has nothing for this owner.
			case !m.available(who, got):
				t.Fatalf("Allocate(%s) = %s, which is not allowed or not free (held by %q)", who, got, m.ownerOf(got))
			case pool.Strategy == Sequential && got != want:
				t.Fatalf("Allocate(%s) = %s; sequential wants %s", who, got, want)
			case pool.Strategy == Random && want.IsValid() && !expectedRandom(m, who, want, got):
				t.Fatalf("Allocate(%s) = %s; want %s or a free address", who, got, want)
			default:
				m.assign(who, got)
			}
		case 1: // a specific address
			a := candidates[arg%len(candidates)]
			held, holds := m.holds(who)
			pin, pinned := m.pins[who]
			ok := m.available(who, a) && (!holds || held == a) && (!pinned || pin == a)
			err := idx.AllocateSpecific(who, a, now)
			if (err == nil) != ok {
				t.Fatalf("AllocateSpecific(%s, %s) = %v; model says allowed=%v", who, a, err, ok)
			}
			if err == nil {
				m.assign(who, a)
			}
		case 2, 3: // release or forget a held address
			held := heldSorted(m)
			if len(held) == 0 {
				continue
			}
			a := held[arg%len(held)]
			var o string
			var ok bool
			if op == 2 {
				o, ok = idx.Release(a, now)
			} else {
				o, ok = idx.Forget(a)
			}
			if !ok || o != m.held[a] {
				t.Fatalf("release of %s returned %q, %v; want %q", a, o, ok, m.held[a])
			}
			delete(m.held, a)
			if op == 2 && grace > 0 {
				m.cooling[a] = cooldown{owner: o, until: now.Add(grace)}
				m.coolingOf[o] = a
			}
		case 4: // time passes
			now = now.Add(time.Duration(arg%16) * time.Second)
		case 5: // the pool is re-read unchanged (a resync): nothing may move
			idx.Reconfigure(mustParse(t, fp.spec))
		case 6: // a restart: rebuild from what exists, and replay the releases still cooling
			var existing []Allocation
			for _, a := range heldSorted(m) {
				existing = append(existing, Allocation{Owner: m.held[a], Addr: a})
			}
			var err error
			if idx, err = Rebuild(pool, existing, rand.New(rand.NewPCG(2, uint64(arg)))); err != nil {
				t.Fatalf("Rebuild: %v", err)
			}
			cooling := make([]netip.Addr, 0, len(m.cooling))
			for a := range m.cooling {
				cooling = append(cooling, a)
			}
			slices.SortFunc(cooling, func(a, b netip.Addr) int {
				if c := m.cooling[a].until.Compare(m.cooling[b].until); c != 0 {
					return c
				}
				return a.Compare(b)
			})
			// Replayed in this order, each owner's latest release is the one it may have back.
			m.coolingOf = map[string]netip.Addr{}
			for _, a := range cooling {
				c := m.cooling[a]
				idx.ObserveRelease(c.owner, a, c.until.Add(-grace))
				m.coolingOf[c.owner] = a
			}
		}
		checkCounts(t, idx, m, now)
	}
}

// expectAllocate is the address the model says owner gets from Allocate (invalid: an error).
// For the random strategy it is the address owner must get when it has one, or any free one.
func expectAllocate(m *model, owner string) netip.Addr {
	if a, ok := m.holds(owner); ok {
		return a
	}
	if a, ok := m.pins[owner]; ok {
		if m.available(owner, a) {
			return a
		}
		return netip.Addr{}
	}
	if a, ok := m.coolingOf[owner]; ok && m.available(owner, a) {
		return a
	}
	if free := m.free(); len(free) > 0 {
		return free[0]
	}
	return netip.Addr{}
}

// expectedRandom: with the random strategy an owner with a held, pinned or cooling address must get
// it; otherwise any free address will do.
func expectedRandom(m *model, owner string, want, got netip.Addr) bool {
	if _, ok := m.holds(owner); ok {
		return got == want
	}
	if _, ok := m.pins[owner]; ok {
		return got == want
	}
	if a, ok := m.coolingOf[owner]; ok && m.available(owner, a) {
		return got == want
	}
	return slices.Contains(m.free(), got)
}

func heldSorted(m *model) []netip.Addr {
	out := make([]netip.Addr, 0, len(m.held))
	for a := range m.held {
		out = append(out, a)
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return out
}

func checkCounts(t *testing.T, idx *Index, m *model, now time.Time) {
	t.Helper()
	m.expire(now)
	st := idx.Stats(now)
	total := int64(len(m.allowed))
	if st.Total.Int64() != total || st.Free.Int64()+int64(st.Used) != total {
		t.Fatalf("counts do not add up: %+v, want total %d", st, total)
	}
	if want := int64(len(m.free())); st.Free.Int64() != want {
		t.Fatalf("free = %d; model has %d free (%v)", st.Free.Int64(), want, m.free())
	}
	if st.Allocated+st.OutOfRange != len(m.held) || idx.Held() != len(m.held) {
		t.Fatalf("allocated = %d, held = %d; model holds %d", st.Allocated, idx.Held(), len(m.held))
	}
	for a, o := range m.held {
		if got, ok := idx.Owner(a); !ok || got != o {
			t.Fatalf("Owner(%s) = %q; model says %q", a, got, o)
		}
	}
}
