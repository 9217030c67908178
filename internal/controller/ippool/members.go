package ippool

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// members are the claims of each pool, as this controller's claim event handlers have seen
// them: the informers' own objects, which are read and never changed (claim.deepCopy before a
// change). A pool reconcile reads its claims here. Through the cache it would read them from a
// field index, but under --namespace controller-runtime's cache keeps an informer per namespace
// and hides their indexes, and List then copies every claim's struct on every pass (3.3 GB of
// the manager's 15.2 GB of allocation over a 10,000-machine run).
//
// The handler that enqueues a pool for a claim's event records the claim first, in the same
// call, so the reconcile an event brings about always finds what the event carried. What is
// recorded may lag the cache by the events not yet handled, and only as the cache itself lags
// the API server: each of those events enqueues the pool again. The controller starts
// reconciling only once its handlers have seen every claim the cache held at start.
//
// Each pool also keeps the claims to look at: those with an event since a pass last found them
// needing nothing. A pass over a pool of 10,000 served claims that one claim's event brought
// about then looks at that claim, not at 10,000 (8.5 s of the manager's 73 s of CPU over a
// 10,000-machine run went to those walks). A claim leaves the set only when a pass finds it
// served (or deleted with nothing left to release); one still waiting for an address, paused,
// or being worked on stays in it, so the next pass tries it again as every pass did before.
type members struct {
	mu    sync.RWMutex
	pools map[types.NamespacedName]*poolMembers
}

// poolMembers are one pool's claims, and the keys of those to look at.
type poolMembers struct {
	all     map[memberKey]claim
	changed map[memberKey]struct{}
}

// memberKey names a claim within its pool: an IPClaim and a Cluster API IPAddressClaim of one
// name are two claims.
type memberKey struct {
	kind, name string
}

func keyOf(c claim) memberKey { return memberKey{kind: c.kind(), name: c.object().GetName()} }

// set records that the claim belongs to pools, as changed: it is put in each (replacing what
// was there of it), and taken out of every pool of previous that is not among them.
func (m *members) set(c claim, previous, pools []types.NamespacedName) {
	key := keyOf(c)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range previous {
		if !slices.Contains(pools, p) {
			m.removeLocked(p, key)
		}
	}
	for _, p := range pools {
		if m.pools == nil {
			m.pools = map[types.NamespacedName]*poolMembers{}
		}
		pm := m.pools[p]
		if pm == nil {
			pm = &poolMembers{all: map[memberKey]claim{}, changed: map[memberKey]struct{}{}}
			m.pools[p] = pm
		}
		pm.all[key] = c
		pm.changed[key] = struct{}{}
	}
}

// remove takes the claim out of pools.
func (m *members) remove(c claim, pools []types.NamespacedName) {
	key := keyOf(c)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range pools {
		m.removeLocked(p, key)
	}
}

func (m *members) removeLocked(pool types.NamespacedName, key memberKey) {
	pm := m.pools[pool]
	if pm == nil {
		return
	}
	delete(pm.all, key)
	delete(pm.changed, key)
	if len(pm.all) == 0 {
		delete(m.pools, pool)
	}
}

// touch marks the pool's claims called name (of either kind) as changed: an IPAddress of theirs
// came, changed or went, which changes what the pool's index holds for them.
func (m *members) touch(pool types.NamespacedName, name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pm := m.pools[pool]
	if pm == nil {
		return
	}
	for _, kind := range []string{ipClaimKind, capiClaimKind} {
		if key := (memberKey{kind: kind, name: name}); pm.all[key] != nil {
			pm.changed[key] = struct{}{}
		}
	}
}

// again marks claims as changed once more: a pass left them needing work.
func (m *members) again(pool types.NamespacedName, claims []claim) {
	if len(claims) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	pm := m.pools[pool]
	if pm == nil {
		return
	}
	for _, c := range claims {
		if key := keyOf(c); pm.all[key] != nil {
			pm.changed[key] = struct{}{}
		}
	}
}

// take returns the pool's claims a pass looks at, in no particular order: every claim when all,
// else those changed; either way none is marked changed any more. The slice is the caller's;
// the claims are the informers' and must not be changed.
func (m *members) take(pool types.NamespacedName, all bool) []claim {
	m.mu.Lock()
	defer m.mu.Unlock()
	pm := m.pools[pool]
	if pm == nil {
		return nil
	}
	var out []claim
	if all {
		out = pm.claims()
	} else {
		out = make([]claim, 0, len(pm.changed))
		for key := range pm.changed {
			out = append(out, pm.all[key])
		}
	}
	clear(pm.changed)
	return out
}

// claims is every claim of the pool, in a slice of the caller's.
func (pm *poolMembers) claims() []claim {
	out := make([]claim, 0, len(pm.all))
	for _, c := range pm.all {
		out = append(out, c)
	}
	return out
}

// of returns every claim of pool, in no particular order, and leaves which are changed as it
// is. The slice is the caller's; the claims are the informers' and must not be changed.
func (m *members) of(pool types.NamespacedName) []claim {
	m.mu.RLock()
	defer m.mu.RUnlock()
	pm := m.pools[pool]
	if pm == nil {
		return nil
	}
	return pm.claims()
}
