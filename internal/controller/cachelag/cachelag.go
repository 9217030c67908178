// Package cachelag remembers what this manager wrote until its informer cache shows it. It is
// the one memory of unseen writes: every controller that must not act twice on a cache that
// trails its own writes uses it, with the one rule below.
//
// A controller reads from an informer cache that trails its own writes by a few milliseconds to
// seconds. A reconcile that runs in between sees the object as it was before the write and
// would make the same write again: with an optimistic lock (or a create) the API server refuses
// it, without one it is a second write of the same thing. So a write is recorded with the
// resourceVersion of the copy it was made against ("" for a create: there was no copy).
//
// The rule: a record holds while the cache's copy is at or before that version (or, for a
// create, while the cache has no copy), and is forgotten as soon as the cache shows a later
// version (the write, or something newer) or Expiry after the write, whichever comes first.
// resourceVersions of one resource are ordered decimal integers and are compared with
// apimachinery's resourceversion.CompareResourceVersion; a version that is not one is compared
// for equality only. After a create or a write with an optimistic lock, "later than the version
// written against" is exactly "shows the write". After a write without a lock (Cluster API's
// patch helper), a version someone else wrote in between also counts: the worst outcome is one
// repeated write. A writer that makes its next write against what it remembers (not the cache)
// must record the version each write made instead (WroteAt, from the API server's answer, which
// the patch helper does not hand back): otherwise a cache showing its previous write would pass
// for showing the last one.
//
// Expiry bounds what a lost write (an object deleted before the cache ever showed it, a watch
// that missed an event) can hold up: past it the cache is trusted again, and a repeated write is
// refused or merely repeated, never wrong.
package cachelag

import (
	"iter"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/utils/clock"
)

// Expiry is how long a write is trusted to be on its way to the cache. A cache trails by well
// under a second on a healthy manager, by a few seconds during a thousand-machine burst.
const Expiry = 30 * time.Second

// Writes maps an object (by a key the caller chooses: its namespace/name, or a finer one) to
// what this manager last wrote to it and the version of the object that write was made against.
// It lives in memory: a restarted manager starts from a cache that already shows everything
// written before.
//
// The zero value is ready to use; it is safe for concurrent use.
type Writes[V any] struct {
	mu        sync.Mutex
	m         map[string]write[V]
	lastSweep time.Time
	// clock is the real clock when nil; tests set a fake one.
	clock clock.PassiveClock
}

type write[V any] struct {
	before string
	// made says before is the version the write made, not the one it was made against: the
	// cache shows the write once its copy is at that version or later.
	made  bool
	at    time.Time
	value V
}

// Wrote records that value was written to the object whose copy, at resourceVersion before, the
// write was made against; before is "" when the write created the object.
func (w *Writes[V]) Wrote(key, before string, value V) {
	w.record(key, write[V]{before: before, value: value})
}

// WroteAt records that value was written to the object by a write that made resourceVersion
// made (the API server's answer to it). A writer that can see its answer records this way: its
// record holds until the cache shows that very version, also when the write was made against a
// copy older than the writer's previous write (a status taken from this memory, not the cache),
// where "later than the copy written against" could be the previous write itself.
func (w *Writes[V]) WroteAt(key, made string, value V) {
	w.record(key, write[V]{before: made, made: true, value: value})
}

func (w *Writes[V]) record(key string, wr write[V]) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	if w.m == nil {
		w.m = map[string]write[V]{}
	}
	// Records nobody asks about again (an object deleted meanwhile) go with the next write past
	// Expiry: the map holds at most the writes of the last two Expiry periods.
	if now.Sub(w.lastSweep) >= Expiry {
		for k, wr := range w.m {
			if now.Sub(wr.at) >= Expiry {
				delete(w.m, k)
			}
		}
		w.lastSweep = now
	}
	wr.at = now
	w.m[key] = wr
}

// Unseen returns what was last written to the object when the cache's copy, at resourceVersion
// current ("" when the cache has no copy), does not show that write yet. Otherwise the record
// is forgotten and ok is false: the cache is to be believed.
func (w *Writes[V]) Unseen(key, current string) (value V, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	wr, found := w.m[key]
	if !found {
		return value, false
	}
	if w.now().Sub(wr.at) >= Expiry || shows(current, wr.before, wr.made) {
		delete(w.m, key)
		return value, false
	}
	return wr.value, true
}

// shows says whether a copy at resourceVersion current includes a write (or something newer):
// it is later than the version before that the write was made against, or, when made, at or
// after the version before that the write made.
func shows(current, before string, made bool) bool {
	switch {
	case current == "":
		return false // no copy: the object is not created yet, or gone
	case before == "":
		return true // a created object the cache now has
	}
	c, err := resourceversion.CompareResourceVersion(current, before)
	if err != nil {
		return made == (current == before)
	}
	if made {
		return c >= 0
	}
	return c > 0
}

// Forget drops the object's record: it is gone, or what was written no longer matters.
func (w *Writes[V]) Forget(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, key)
}

// All yields the records not expired yet, from a copy taken when it is called: the caller may
// Forget or ask Unseen about each.
func (w *Writes[V]) All() iter.Seq2[string, V] {
	w.mu.Lock()
	now := w.now()
	live := make(map[string]V, len(w.m))
	for k, wr := range w.m {
		if now.Sub(wr.at) < Expiry {
			live[k] = wr.value
		}
	}
	w.mu.Unlock()
	return func(yield func(string, V) bool) {
		for k, v := range live {
			if !yield(k, v) {
				return
			}
		}
	}
}

// Len is how many objects have a record, expired ones included until they are swept.
func (w *Writes[V]) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.m)
}

func (w *Writes[V]) now() time.Time {
	if w.clock == nil {
		return time.Now()
	}
	return w.clock.Now()
}
