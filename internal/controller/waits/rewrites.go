package waits

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Rewrites remembers when each object's wait was last written, so that the words of a wait that
// lasts are rewritten at most once per quiet period: a Metal3Machine waiting for a host names
// the hosts it cannot have and who holds them, words that change with every claim of a
// scale-up. It lives in memory: a restarted manager writes the next change at once.
//
// The zero value is ready to use.
type Rewrites struct {
	mu   sync.Mutex
	last map[types.UID]time.Time
}

// Hold returns how much longer the object's new wait must stay unwritten: zero to write it now,
// which then counts as written now. onlyWords says the status already reports this wait (same
// status and reason) and only its message changed; any other change is written at once. quiet
// zero means DefaultQuiet.
func (w *Rewrites) Hold(uid types.UID, onlyWords bool, quiet time.Duration, now time.Time) time.Duration {
	if quiet == 0 {
		quiet = DefaultQuiet
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if last, ok := w.last[uid]; ok && onlyWords {
		if hold := last.Add(quiet).Sub(now); hold > 0 {
			return hold
		}
	}
	if w.last == nil {
		w.last = map[types.UID]time.Time{}
	}
	w.last[uid] = now
	return 0
}

// Forget drops the object: its wait is over, or it is gone.
func (w *Rewrites) Forget(uid types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.last, uid)
}
