package ippool

import (
	"cmp"
	"encoding/json"
	"net/netip"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/cachelag"
	"github.com/metalwire/metalwire/pkg/ipam"
)

// maxRecordedReleases bounds the releases annotation: beyond it the oldest releases are dropped
// (they may then be reused early after a restart, never while the controller keeps running).
const maxRecordedReleases = 500

// poolState is the allocator of one IPPool: its index and what the index was built from. mu
// guards every field; the index is not safe for concurrent use.
type poolState struct {
	mu         sync.Mutex
	uid        types.UID
	generation int64
	namePrefix string
	index      *ipam.Index
	// releases are the addresses released while their grace period may still run, for the
	// releases annotation (a restarted controller replays them).
	releases map[netip.Addr]release
	// lastStatus is when the pool status was last written; writes are spaced out during bursts.
	lastStatus time.Time
	// suspects are IPAddresses of the pool that may no longer belong to anyone: their claim was
	// deleted, or the index found them contradicting another allocation. Each is checked against
	// the API server in the next reconcile. The value is the UID of a claim known to be deleted
	// (from its delete event), or "" when nothing is known.
	suspects map[string]types.UID
	// written are the claims (by name) whose status this manager wrote, until the cache shows
	// the write: until then the claim is not served a second time.
	written cachelag.Writes[struct{}]
	// lastFull is when a pass last looked at every claim of the pool, not only the changed
	// ones (members); fullNext asks the next pass to: the index was moved to a new spec, or
	// suspects were checked.
	lastFull time.Time
	fullNext bool
}

// fullPass reports whether a pass starting at now looks at every claim of the pool: the first
// pass of this state, one fullNext asks for, and one every fullPassInterval, a net under the
// changed-claims bookkeeping that costs a walk of the pool now and then instead of on every pass.
func (st *poolState) fullPass(now time.Time) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.fullNext && !st.lastFull.IsZero() && now.Sub(st.lastFull) < fullPassInterval {
		return false
	}
	st.fullNext, st.lastFull = false, now
	return true
}

type release struct {
	Claim      string    `json:"claim"`
	Address    string    `json:"address"`
	ReleasedAt time.Time `json:"releasedAt"`
}

// states holds the allocator of every pool this manager has reconciled.
type states struct {
	mu sync.Mutex
	m  map[types.NamespacedName]*poolState
}

func (s *states) get(key types.NamespacedName) *poolState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[key]
}

// create installs a new, locked state for key. The caller fills it and unlocks it. Installing it
// before reading the cache means an IPAddress event either is in what the caller reads or waits
// for the lock and is applied after: none is lost.
func (s *states) create(key types.NamespacedName) *poolState {
	st := &poolState{releases: map[netip.Addr]release{}, suspects: map[string]types.UID{}}
	st.mu.Lock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[types.NamespacedName]*poolState{}
	}
	s.m[key] = st
	return st
}

func (s *states) drop(key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
}

// recordRelease notes a release for the releases annotation. Called with st.mu held.
func (st *poolState) recordRelease(owner string, addr netip.Addr, now time.Time) {
	if st.index.Pool().ReuseGracePeriod <= 0 {
		return
	}
	st.releases[addr] = release{Claim: owner, Address: addr.String(), ReleasedAt: now.UTC()}
}

// releasesAnnotation is the annotation value for the releases still cooling at now, or "" when
// none are. Called with st.mu held.
func (st *poolState) releasesAnnotation(now time.Time) string {
	grace := st.index.Pool().ReuseGracePeriod
	list := make([]release, 0, len(st.releases))
	for addr, r := range st.releases {
		if grace <= 0 || !r.ReleasedAt.Add(grace).After(now) {
			delete(st.releases, addr)
			continue
		}
		list = append(list, r)
	}
	if len(list) == 0 {
		return ""
	}
	slices.SortFunc(list, func(a, b release) int {
		if c := b.ReleasedAt.Compare(a.ReleasedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.Address, b.Address)
	})
	if len(list) > maxRecordedReleases {
		list = list[:maxRecordedReleases]
	}
	out, err := json.Marshal(list)
	if err != nil {
		return ""
	}
	return string(out)
}

// replayReleases feeds the releases annotation of a pool to a fresh index, so that addresses
// released before a restart keep cooling. A malformed annotation is ignored: the worst outcome is
// an address reused before its grace period ends.
func (st *poolState) replayReleases(pool *ipamv1.IPPool) {
	raw := pool.Annotations[ipamv1.ReleasesAnnotation]
	if raw == "" {
		return
	}
	var list []release
	if json.Unmarshal([]byte(raw), &list) != nil {
		return
	}
	for _, r := range list {
		addr, err := netip.ParseAddr(r.Address)
		if err != nil {
			continue
		}
		st.index.ObserveRelease(r.Claim, addr, r.ReleasedAt)
		st.releases[addr] = r
	}
}

// releaseIfHeld frees addr in the index if owner still holds it there: events repeat, and the
// address may have gone to someone else since.
func (st *poolState) releaseIfHeld(owner string, addr netip.Addr, now time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.index == nil {
		return
	}
	if held, ok := st.index.Owner(addr); ok && held == owner {
		st.index.Release(addr, now)
		st.recordRelease(owner, addr.Unmap(), now)
	}
}

// forgetIfHeld frees addr at once (no cooling) if owner still holds it: for an address handed
// out but never used by a host.
func (st *poolState) forgetIfHeld(owner string, addr netip.Addr) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.forgetIfHeldLocked(owner, addr)
}

// forgetIfHeldLocked is forgetIfHeld for a caller holding st.mu.
func (st *poolState) forgetIfHeldLocked(owner string, addr netip.Addr) {
	if held, ok := st.index.Owner(addr); ok && held == owner {
		st.index.Forget(addr)
	}
}

// observe records an IPAddress seen in the cache. A contradiction (the index gives the address
// or the claim to someone else) makes the IPAddress a suspect, checked against the API server.
func (st *poolState) observe(name, owner string, addr netip.Addr) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.index != nil && st.index.Observe(owner, addr) != nil {
		st.suspectLocked(name, "")
	}
}

// suspect queues an IPAddress to be checked against the API server.
func (st *poolState) suspect(name string, deletedClaim types.UID) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.suspectLocked(name, deletedClaim)
}

func (st *poolState) suspectLocked(name string, deletedClaim types.UID) {
	if prev, ok := st.suspects[name]; !ok || prev == "" {
		st.suspects[name] = deletedClaim
	}
}

// takeSuspects hands the queued suspects to a reconcile. Called with st.mu held.
func (st *poolState) takeSuspectsLocked() map[string]types.UID {
	if len(st.suspects) == 0 {
		return nil
	}
	out := st.suspects
	st.suspects = map[string]types.UID{}
	return out
}

// settleLocked makes the index say that owner holds addr, as the API server does: whatever the
// index held against that (another address of owner, another owner of addr) is dropped, and the
// returned addresses are those whose IPAddresses must now be checked. Called with st.mu held.
func (st *poolState) settleLocked(owner string, addr netip.Addr) []netip.Addr {
	var displaced []netip.Addr
	if held, ok := st.index.Lookup(owner); ok && held != addr.Unmap() {
		st.index.Forget(held)
		displaced = append(displaced, held)
	}
	if other, ok := st.index.Owner(addr); ok && other != owner {
		st.index.Forget(addr)
	}
	_ = st.index.Observe(owner, addr)
	return displaced
}
