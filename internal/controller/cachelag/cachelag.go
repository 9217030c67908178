// Package cachelag remembers what this manager wrote to an object until its cache shows it.
//
// A controller reads from an informer cache that trails its own writes by a few milliseconds to
// seconds. A reconcile that runs in between sees the object as it was before the write, and
// would write the same change again: with an optimistic lock the API server refuses it, without
// one it is a second write of the same thing. Remembering the write and the object's
// resourceVersion before it tells the two apart: while the cache still has that version it has
// not seen the write; once it has another, the cache is trusted again.
package cachelag

import "sync"

// Writes maps an object (by a key the caller chooses) to what this manager wrote to it, for as
// long as the cache's copy is still the version the write was made against. It lives in memory:
// a restarted manager starts from a cache that already shows everything written before.
//
// The zero value is ready to use; it is safe for concurrent use.
type Writes[V any] struct {
	mu sync.Mutex
	m  map[string]write[V]
}

type write[V any] struct {
	before string
	value  V
}

// Wrote records that value was written to the object whose copy, at resourceVersion before, the
// write was made against.
func (w *Writes[V]) Wrote(key, before string, value V) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]write[V]{}
	}
	w.m[key] = write[V]{before: before, value: value}
}

// Unseen returns what was written to the object when the cache's copy, at resourceVersion
// current, does not show it yet. A copy of any other version shows it (or something newer), and
// the write is forgotten.
func (w *Writes[V]) Unseen(key, current string) (V, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	wr, ok := w.m[key]
	if !ok {
		var zero V
		return zero, false
	}
	if wr.before != current {
		delete(w.m, key)
		var zero V
		return zero, false
	}
	return wr.value, true
}

// Retain forgets every write whose key keep rejects: objects gone from the cache, whose next
// version will never be seen.
func (w *Writes[V]) Retain(keep func(key string) bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.m {
		if !keep(k) {
			delete(w.m, k)
		}
	}
}

// Len is how many writes the cache has not shown yet, as far as this manager has looked.
func (w *Writes[V]) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.m)
}
