package ipam

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// Source is what the random strategy draws from. *math/rand/v2.Rand is one: tests pass a seeded
// one to get the same addresses every run.
type Source interface {
	Uint64() uint64
	Uint64N(n uint64) uint64
}

// Allocation is an address held by an owner: for the IPPool controller, an IPAddress and the
// claim it belongs to.
type Allocation struct {
	Owner string
	Addr  netip.Addr
}

// Index is the allocation state of one pool: which addresses are held, by whom, which are pinned
// by preAllocations and which are cooling after a release. It answers "which address next" in
// O(log n) for n taken addresses.
//
// An Index is not safe for concurrent use: the IPPool controller serialises the work of a pool.
// It holds no clock; every call that depends on time takes the current time.
type Index struct {
	pool  *Pool
	rnd   Source
	taken *takenSet // positions of in-range addresses that are allocated, pinned or cooling

	owners     map[netip.Addr]string // allocated address -> owner, in range or not
	addrs      map[string]netip.Addr // owner -> allocated address
	outOfRange int                   // allocated addresses the pool no longer contains

	pinned map[netip.Addr]string // preAllocations: address -> owner
	pins   map[string]netip.Addr // preAllocations: owner -> address

	cooling   map[netip.Addr]cooldown // released addresses still in their grace period
	coolingOf map[string]netip.Addr   // the last address each owner released, while it cools
	queue     cooldownQueue
}

// NewIndex makes an empty index for pool, with the pool's preAllocations reserved. rnd is the
// random strategy's source; nil means the runtime's random numbers.
func NewIndex(pool *Pool, rnd Source) *Index {
	if rnd == nil {
		rnd = runtimeRand{}
	}
	idx := &Index{
		pool:      pool,
		rnd:       rnd,
		taken:     newTakenSet(),
		owners:    map[netip.Addr]string{},
		addrs:     map[string]netip.Addr{},
		pinned:    map[netip.Addr]string{},
		pins:      map[string]netip.Addr{},
		cooling:   map[netip.Addr]cooldown{},
		coolingOf: map[string]netip.Addr{},
	}
	for owner, addr := range pool.PreAllocations {
		// Parse has checked that each pinned address is in the pool and pinned once.
		_ = idx.Reserve(owner, addr)
	}
	return idx
}

// Rebuild makes the index of a pool from the allocations that exist, as read from an informer
// cache on start. It always returns a usable index; the error lists allocations it could not
// record (an address held by two owners, an owner holding two addresses), keeping the first seen.
func Rebuild(pool *Pool, existing []Allocation, rnd Source) (*Index, error) {
	idx := NewIndex(pool, rnd)
	var errs []error
	for _, a := range existing {
		if err := idx.Observe(a.Owner, a.Addr); err != nil {
			errs = append(errs, err)
		}
	}
	return idx, errors.Join(errs...)
}

// Pool is the pool the index allocates from.
func (idx *Index) Pool() *Pool { return idx.pool }

// Lookup returns the address owner holds.
func (idx *Index) Lookup(owner string) (netip.Addr, bool) {
	a, ok := idx.addrs[owner]
	return a, ok
}

// Owner returns who holds addr.
func (idx *Index) Owner(addr netip.Addr) (string, bool) {
	o, ok := idx.owners[addr.Unmap()]
	return o, ok
}

// Allocate gives owner an address: the one it holds already (so a retried reconcile is
// harmless), the one preAllocations pins it to, the one it released itself within the grace
// period, or a free one chosen by the pool's strategy.
func (idx *Index) Allocate(owner string, now time.Time) (netip.Addr, error) {
	idx.expire(now)
	if a, ok := idx.addrs[owner]; ok {
		return a, nil
	}
	if a, ok := idx.pins[owner]; ok {
		if err := idx.take(owner, a); err != nil {
			return netip.Addr{}, err
		}
		return a, nil
	}
	// The grace period protects other hosts from a stale ARP entry; the host that used the
	// address may have it back (seed 001: a re-provisioned host keeps its address).
	if a, ok := idx.coolingOf[owner]; ok && idx.take(owner, a) == nil {
		return a, nil
	}
	free := idx.pool.total.sub(idx.taken.count())
	if free.isZero() {
		return netip.Addr{}, idx.exhausted()
	}
	var pos u128
	if idx.pool.Strategy == Random {
		pos = idx.taken.nthFree(randBelow(idx.rnd, free))
	} else {
		pos = idx.taken.lowestFree()
	}
	addr := idx.pool.addrAt(pos)
	idx.assign(owner, addr)
	return addr, nil
}

// AllocateSpecific gives owner the address it asked for (the ipAddress annotation of a claim).
func (idx *Index) AllocateSpecific(owner string, addr netip.Addr, now time.Time) error {
	idx.expire(now)
	addr = addr.Unmap()
	if held, ok := idx.addrs[owner]; ok {
		if held == addr {
			return nil
		}
		return addressError(addr, ErrOwnerConflict, "claim %q already holds %s; release it before asking for %s", owner, held, addr)
	}
	if pin, ok := idx.pins[owner]; ok && pin != addr {
		return addressError(addr, ErrOwnerConflict,
			"claim %q asks for %s but spec.preAllocations pins it to %s; drop the request or change preAllocations", owner, addr, pin)
	}
	if !idx.pool.Contains(addr) {
		return addressError(addr, ErrNotInPool, "%s; ask for an address of the pool", idx.pool.whyNotIn(addr))
	}
	return idx.take(owner, addr)
}

// take assigns an address of the pool to owner unless someone else has a claim on it.
func (idx *Index) take(owner string, addr netip.Addr) error {
	if other, ok := idx.owners[addr]; ok && other != owner {
		if pin, pinned := idx.pinned[addr]; pinned && pin == owner {
			return addressError(addr, ErrAddressTaken,
				"%s is pinned to claim %q by spec.preAllocations but held by %q; release that address or change preAllocations", addr, owner, other)
		}
		return addressError(addr, ErrAddressTaken, "%s is allocated to %q; ask for another address", addr, other)
	}
	if pin, ok := idx.pinned[addr]; ok && pin != owner {
		return addressError(addr, ErrAddressTaken, "%s is reserved for claim %q by spec.preAllocations; ask for another address", addr, pin)
	}
	if c, ok := idx.cooling[addr]; ok && c.owner != owner {
		err := addressError(addr, ErrCooling, "%s was released by %q and may be reused from %s (reuseGracePeriod); ask for another address or retry then",
			addr, c.owner, c.until.UTC().Format(time.RFC3339))
		err.Until = c.until
		return err
	}
	idx.assign(owner, addr)
	return nil
}

// Observe records an allocation that exists (an IPAddress seen in the cache), in the pool or
// not: addresses outside it after an edit count as outOfRange and stay their owner's.
func (idx *Index) Observe(owner string, addr netip.Addr) error {
	addr = addr.Unmap()
	if !addr.IsValid() {
		return addressError(addr, ErrNotInPool, "claim %q has an IPAddress without a valid address; fix or delete it", owner)
	}
	if other, ok := idx.owners[addr]; ok {
		if other == owner {
			return nil
		}
		return addressError(addr, ErrAddressTaken, "%s is recorded for both %q and %q; delete one of the two IPAddresses", addr, other, owner)
	}
	if held, ok := idx.addrs[owner]; ok {
		return addressError(addr, ErrOwnerConflict, "claim %q holds both %s and %s; delete one of the two IPAddresses", owner, held, addr)
	}
	idx.assign(owner, addr)
	return nil
}

// Reserve pins addr to owner (spec.preAllocations): no one else gets it, and owner gets it when
// it asks. If another owner holds addr now, the pin takes effect when that owner releases it; if
// owner holds another address already, it keeps that one until it releases it.
func (idx *Index) Reserve(owner string, addr netip.Addr) error {
	addr = addr.Unmap()
	if !idx.pool.Contains(addr) {
		return addressError(addr, ErrNotInPool, "%s; pin an address of the pool", idx.pool.whyNotIn(addr))
	}
	if other, ok := idx.pinned[addr]; ok && other != owner {
		return addressError(addr, ErrAddressTaken, "%s is already pinned to claim %q", addr, other)
	}
	if old, ok := idx.pins[owner]; ok && old != addr {
		delete(idx.pinned, old)
		idx.sync(old)
	}
	idx.pinned[addr], idx.pins[owner] = owner, addr
	idx.sync(addr)
	return nil
}

// Release frees addr when its IPAddress is deleted. With a grace period the address cools first:
// until now+grace only its last owner may have it back. It returns the owner it had, if any;
// releasing an address no one holds is a no-op (events repeat).
func (idx *Index) Release(addr netip.Addr, now time.Time) (string, bool) {
	return idx.release(addr.Unmap(), now, idx.pool.ReuseGracePeriod)
}

// Forget frees addr at once, with no grace period: for an allocation whose IPAddress was never
// created (the create failed), so no host ever used it.
func (idx *Index) Forget(addr netip.Addr) (string, bool) {
	return idx.release(addr.Unmap(), time.Time{}, 0)
}

func (idx *Index) release(addr netip.Addr, now time.Time, grace time.Duration) (string, bool) {
	owner, ok := idx.owners[addr]
	if !ok {
		return "", false
	}
	delete(idx.owners, addr)
	delete(idx.addrs, owner)
	if !idx.pool.Contains(addr) {
		idx.outOfRange--
		return owner, true
	}
	if grace > 0 {
		idx.cool(addr, owner, now.Add(grace))
	}
	idx.sync(addr)
	return owner, true
}

// ObserveRelease records a release that happened before the index existed (a restart within the
// grace period, with the release time kept somewhere durable), so the address keeps cooling until
// releasedAt + grace. It does nothing if the address is held again or not in the pool.
func (idx *Index) ObserveRelease(owner string, addr netip.Addr, releasedAt time.Time) {
	addr = addr.Unmap()
	if _, held := idx.owners[addr]; held || idx.pool.ReuseGracePeriod <= 0 || !idx.pool.Contains(addr) {
		return
	}
	if c, ok := idx.cooling[addr]; ok && !c.until.Before(releasedAt.Add(idx.pool.ReuseGracePeriod)) {
		return // a later release is already recorded
	}
	idx.cool(addr, owner, releasedAt.Add(idx.pool.ReuseGracePeriod))
	idx.sync(addr)
}

// assign records owner's address. Callers have checked that no one else has a claim on it.
func (idx *Index) assign(owner string, addr netip.Addr) {
	idx.owners[addr], idx.addrs[owner] = owner, addr
	if c, ok := idx.cooling[addr]; ok {
		idx.uncool(addr, c)
	}
	if !idx.pool.Contains(addr) {
		idx.outOfRange++
		return
	}
	idx.sync(addr)
}

// sync puts addr's position in the taken set, or takes it out, to match the maps.
func (idx *Index) sync(addr netip.Addr) {
	pos, ok := idx.pool.position(addr)
	if !ok {
		return
	}
	_, allocated := idx.owners[addr]
	_, pinned := idx.pinned[addr]
	_, cooling := idx.cooling[addr]
	if allocated || pinned || cooling {
		idx.taken.insert(pos)
	} else {
		idx.taken.remove(pos)
	}
}

// Reconfigure moves the index to an edited pool: allocations are kept (those now outside the pool
// count as outOfRange), cooling addresses still in the pool keep cooling, and reservations become
// the new pool's preAllocations. It costs O(n log n), as edits are rare.
func (idx *Index) Reconfigure(pool *Pool) {
	next := NewIndex(pool, idx.rnd)
	for addr, owner := range idx.owners {
		next.assign(owner, addr)
	}
	for addr, c := range idx.cooling {
		if pool.Contains(addr) {
			if _, held := next.owners[addr]; !held {
				next.cool(addr, c.owner, c.until)
				next.sync(addr)
			}
		}
	}
	*idx = *next
}

// Stats are the pool's counters (IPPool status) at time now.
type Stats struct {
	// Total is the number of addresses the pool can hand out; Free of them can be handed out now.
	Total, Free Count
	// Used addresses are in the pool and not free: Allocated + Reserved + Cooling.
	Used int
	// Allocated addresses are held by an owner; Reserved are pinned by preAllocations to a claim
	// that has not asked yet; Cooling were released less than reuseGracePeriod ago.
	Allocated, Reserved, Cooling int
	// OutOfRange addresses are held by an owner but no longer in the pool, after an edit.
	OutOfRange int
}

// Stats counts the pool at time now. Free + Used == Total always holds.
func (idx *Index) Stats(now time.Time) Stats {
	idx.expire(now)
	used := idx.taken.len()
	allocated := len(idx.owners) - idx.outOfRange
	return Stats{
		Total:      Count{idx.pool.total},
		Free:       Count{idx.pool.total.sub(idx.taken.count())},
		Used:       used,
		Allocated:  allocated,
		Cooling:    len(idx.cooling),
		Reserved:   used - allocated - len(idx.cooling),
		OutOfRange: idx.outOfRange,
	}
}

// Held is how many addresses are held by an owner, in the pool or not: len(Allocations()),
// without listing them.
func (idx *Index) Held() int { return len(idx.owners) }

// Allocations lists every held address, sorted by address, for IPPool status.
func (idx *Index) Allocations() []Allocation {
	out := make([]Allocation, 0, len(idx.owners))
	for addr, owner := range idx.owners {
		out = append(out, Allocation{Owner: owner, Addr: addr})
	}
	slices.SortFunc(out, func(a, b Allocation) int { return a.Addr.Compare(b.Addr) })
	return out
}

// OutOfRange lists held addresses the pool no longer contains, sorted by address.
func (idx *Index) OutOfRange() []Allocation {
	var out []Allocation
	for _, a := range idx.Allocations() {
		if !idx.pool.Contains(a.Addr) {
			out = append(out, a)
		}
	}
	return out
}

func (idx *Index) exhausted() error {
	err := &ExhaustedError{Total: Count{idx.pool.total}, Cooling: len(idx.cooling)}
	for _, c := range idx.cooling {
		if err.NextFree.IsZero() || c.until.Before(err.NextFree) {
			err.NextFree = c.until
		}
	}
	return err
}

// String summarises the index for logs and test failures.
func (idx *Index) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pool of %s addresses: %d taken, %d allocated (%d out of range), %d pinned, %d cooling",
		idx.pool.Size(), idx.taken.len(), len(idx.owners), idx.outOfRange, len(idx.pinned), len(idx.cooling))
	return b.String()
}

// runtimeRand draws from the runtime's generator: addresses are not secrets, only a spread.
type runtimeRand struct{}

func (runtimeRand) Uint64() uint64          { return rand.Uint64() }   //nolint:gosec // spreading addresses, not a secret
func (runtimeRand) Uint64N(n uint64) uint64 { return rand.Uint64N(n) } //nolint:gosec // spreading addresses, not a secret
