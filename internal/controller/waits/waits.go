// Package waits decides when a new object's wait is worth a status write. In a scale-up every
// Metal3DataClaim and Metal3Data waits a few seconds for the next controller; writing "waiting"
// and then "ready" doubles the status writes for words nobody reads. A wait that lasts is
// written, and so is any wait on an object whose status already says something else.
package waits

import (
	"sync"
	"time"
)

// DefaultQuiet is how long a new object's first wait stays unwritten: about the time a thousand
// machines' data takes on a small API server (docs/scale.md). A wait longer than that is worth
// showing, unless its queue is moving (Progress).
const DefaultQuiet = 30 * time.Second

// MaxHeld is how many quiet periods a new object's wait may be held at most while others of its
// namespace are being served: a wait that lasts longer is written even in the longest
// scale-up, so that an object stuck for a reason of its own shows it.
const MaxHeld = 10

// Unwritten returns how much longer the wait of an object created at created may stay
// unwritten: zero when it is to be written now. reported says whether the object's status
// already says something (a condition): then the wait is written at once, as the old words
// would mislead. Otherwise the wait is held for the quiet period after the object's creation,
// and for as long as the controller served another object of its namespace within the last
// quiet period (lastServed, zero for never; see Progress), up to MaxHeld quiet periods. quiet
// zero means DefaultQuiet; negative writes every wait at once.
func Unwritten(created, lastServed time.Time, reported bool, quiet time.Duration, now time.Time) time.Duration {
	if quiet == 0 {
		quiet = DefaultQuiet
	}
	if reported || quiet < 0 {
		return 0
	}
	until := created.Add(quiet)
	if moving := lastServed.Add(quiet); moving.After(until) {
		until = moving
		if latest := created.Add(MaxHeld * quiet); until.After(latest) {
			until = latest
		}
	}
	return max(until.Sub(now), 0)
}

// Progress remembers, per namespace, when a controller last served an object: its wait ended
// well (a claim rendered, a Metal3Data ready). While objects of a namespace are being served, a
// new one that waits is in a queue that moves, not stuck: in a scale-up of 5,000 machines every
// claim waits minutes for its turn, and writing each wait (and the event that follows it) cost
// more than a third of the run's time (docs/scale.md).
//
// The zero value is ready to use; it is safe for concurrent use. It lives in memory: a
// restarted manager has served nothing yet, and writes lasting waits after the quiet period.
type Progress struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// Served records that an object of namespace was served at now.
func (p *Progress) Served(namespace string, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		p.last = map[string]time.Time{}
	}
	if now.After(p.last[namespace]) {
		p.last[namespace] = now
	}
}

// LastServed is when an object of namespace was last served; zero for never.
func (p *Progress) LastServed(namespace string) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last[namespace]
}
