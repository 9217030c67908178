package waits

import (
	"sync"
	"time"
)

// Rewrites remembers when each object's status was last written (by a key the caller chooses: a
// UID, a namespace/name), so that a change that may wait is written at most once per quiet
// period, the first at once: a Metal3Machine waiting for a host names the hosts it cannot have
// and who holds them, words that change with every claim of a scale-up; a ClusterNetwork's host
// states change with every host of a burst that joins. It lives in memory: a restarted manager
// writes the next change at once.
//
// The zero value is ready to use.
type Rewrites struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// Hold returns how much longer the object's changed status must stay unwritten: zero to write it
// now, which then counts as written now. mayWait says the change may wait (for a wait: the
// status already reports it, same status and reason, and only its message changed); any other
// change is written at once. quiet zero means DefaultQuiet.
func (w *Rewrites) Hold(key string, mayWait bool, quiet time.Duration, now time.Time) time.Duration {
	if quiet == 0 {
		quiet = DefaultQuiet
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if last, ok := w.last[key]; ok && mayWait {
		if hold := last.Add(quiet).Sub(now); hold > 0 {
			return hold
		}
	}
	if w.last == nil {
		w.last = map[string]time.Time{}
	}
	w.last[key] = now
	return 0
}

// Forget drops the object: its wait is over, or it is gone.
func (w *Rewrites) Forget(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.last, key)
}
