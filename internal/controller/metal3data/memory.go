package metal3data

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// recentFor bounds how long a write is trusted to be on its way to the cache. Past it the
// cache is believed again: a claim deleted by someone before the cache ever showed it is then
// created anew rather than waited for forever.
const recentFor = 30 * time.Second

// recent remembers, for a short while, what this process has just written and the cache may
// not show yet: the address claims it created and the Metal3Data it rendered. A reconcile
// running on a stale cache then waits for the cache instead of creating a claim again or
// rendering again, each of which the API server would refuse (AlreadyExists) but still count.
// An entry is dropped as soon as the cache shows the write, or the Metal3Data goes.
type recent struct {
	mu       sync.Mutex
	claims   map[types.UID]map[string]time.Time // Metal3Data -> address claims created, when
	rendered map[types.UID]time.Time            // Metal3Data rendered (status written), when
}

func (m *recent) claimCreated(data types.UID, claim string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.claims == nil {
		m.claims = map[types.UID]map[string]time.Time{}
	}
	if m.claims[data] == nil {
		m.claims[data] = map[string]time.Time{}
	}
	m.claims[data][claim] = time.Now()
}

// claimPending says whether the claim was created here and the cache has not shown it yet.
func (m *recent) claimPending(data types.UID, claim string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	at, ok := m.claims[data][claim]
	return ok && time.Since(at) < recentFor
}

// claimSeen forgets a created claim once the cache has it.
func (m *recent) claimSeen(data types.UID, claim string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if set := m.claims[data]; set != nil {
		delete(set, claim)
		if len(set) == 0 {
			delete(m.claims, data)
		}
	}
}

func (m *recent) markRendered(data types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rendered == nil {
		m.rendered = map[types.UID]time.Time{}
	}
	m.rendered[data] = time.Now()
}

// renderedButNotSeen says whether this process rendered the Metal3Data and the cache still
// shows it unrendered; once the cache shows it ready (seenReady), the entry goes.
func (m *recent) renderedButNotSeen(data types.UID, seenReady bool) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	at, ok := m.rendered[data]
	if seenReady || (ok && time.Since(at) >= recentFor) {
		delete(m.rendered, data)
		return false
	}
	return ok
}

func (m *recent) forget(data types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.claims, data)
	delete(m.rendered, data)
}
