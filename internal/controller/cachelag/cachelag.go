// Package cachelag remembers what this manager wrote to an object until its cache shows it.
//
// A controller reads from an informer cache that trails its own writes by a few milliseconds to
// seconds. A reconcile that runs in between sees the object as it was before the write, and
// would write the same change again: with an optimistic lock the API server refuses it, without
// one it is a second write of the same thing. Remembering the write and the object's
// resourceVersion before it tells the two apart: while the cache's copy is exactly that version
// it has not seen the write. resourceVersions can only be compared for equality, so any other
// version says nothing (an older copy, read before the write, looks like a newer one): the
// record stays until its object is gone (Forget, Retain) or written again (Wrote). It can only
// ever match the version it was written against, and there is one per object.
package cachelag

import "sync"

// Writes maps an object (by a key the caller chooses) to what this manager last wrote to it and
// the version of the object that write was made against. It lives in memory: a restarted
// manager starts from a cache that already shows everything written before.
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

// Unseen returns what was last written to the object when the cache's copy, at resourceVersion
// current, is the very version that write was made against: the cache does not show it yet.
func (w *Writes[V]) Unseen(key, current string) (V, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	wr, ok := w.m[key]
	if !ok || wr.before != current {
		var zero V
		return zero, false
	}
	return wr.value, true
}

// Forget drops the object's record: it is gone.
func (w *Writes[V]) Forget(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, key)
}

// Retain forgets every record whose key keep rejects.
func (w *Writes[V]) Retain(keep func(key string) bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.m {
		if !keep(k) {
			delete(w.m, k)
		}
	}
}

// Len is how many objects have a record.
func (w *Writes[V]) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.m)
}
