// Package intern stores strings that repeat across many objects once: a Table hands every
// equal string the same bytes, for as long as anything still holds them.
//
// Go's unique package is not enough for a cache that keeps only the strings: unique keeps its
// canonical copy while a unique.Handle is alive, so once the handles are gone (unique.Make(s).Value()
// keeps none) the next collection forgets the copy, and the same string met after it gets new bytes.
// Objects decoded before and after a collection would then not share, and a string already
// canonical in a cached object would stop being the canonical one, so passing that object again
// would rewrite it. A Table instead holds its canonical bytes weakly and forgets them only when
// nothing references them any more, so a string it returned stays the canonical one while it is
// in use.
package intern

import (
	"hash/maphash"
	"sync"
	"unsafe"
	"weak"
)

// minAlloc is the smallest allocation a canonical copy takes: below 16 bytes the runtime packs
// pointer-free allocations together (its tiny allocator), and a weak pointer into such a block
// stays valid while any of its neighbours lives.
const minAlloc = 16

// entry is one canonical string: its bytes, held weakly, and its length.
type entry struct {
	data weak.Pointer[byte]
	n    int
}

// Table is a set of canonical strings. The zero value is not usable; use New.
type Table struct {
	seed maphash.Seed
	mu   sync.Mutex
	m    map[uint64]entry
	// sweepAt is the size at which dead entries are next removed.
	sweepAt int
}

// New returns an empty table.
func New() *Table {
	return &Table{seed: maphash.MakeSeed(), m: map[uint64]entry{}, sweepAt: 1024}
}

// Canonical returns s's canonical copy: a string equal to s whose bytes every other equal string
// the table returned while these bytes are held shares. The first time a string is met (or after
// every copy of it was collected) a copy of it becomes the canonical one; a string whose hash
// another live string already takes is returned as it is. Canonical(Canonical(s)) returns
// the same bytes as long as the first result is held.
func (t *Table) Canonical(s string) string {
	if s == "" {
		return s
	}
	h := maphash.String(t.seed, s)
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.m[h]; ok {
		if p := e.data.Value(); p != nil {
			if c := unsafe.String(p, e.n); c == s { //nolint:gosec // p is the live start of e.n bytes this table copied in and never writes
				return c
			}
			return s // another string with the same hash: left as it is
		}
	}
	b := make([]byte, max(len(s), minAlloc))
	copy(b, s)
	t.m[h] = entry{data: weak.Make(&b[0]), n: len(s)}
	if len(t.m) >= t.sweepAt {
		t.sweepAt = sweep(t.m, func(e entry) bool { return e.data.Value() == nil })
	}
	return unsafe.String(&b[0], len(s)) //nolint:gosec // b is never written after this: the string owns it
}

// Intern makes *p its canonical copy, writing *p only when it does not already hold the
// canonical bytes: a string interned before (and still held there) is not written again, so a
// structure another goroutine reads may be passed again.
func (t *Table) Intern(p *string) { Field(t, p) }

// Field is Intern for a field of any string type (a condition's status, a host's state).
func Field[S ~string](t *Table, p *S) {
	if *p == "" {
		return
	}
	if c := t.Canonical(string(*p)); !sameBytes(c, string(*p)) {
		*p = S(c)
	}
}

// sameBytes reports whether a and b are the same bytes in memory (not only equal).
func sameBytes(a, b string) bool {
	return unsafe.StringData(a) == unsafe.StringData(b) //nolint:gosec // compares addresses only
}

// IsCanonical reports whether s holds its canonical bytes (an empty string is canonical).
func (t *Table) IsCanonical(s string) bool {
	return s == "" || sameBytes(t.Canonical(s), s)
}

// Len is how many strings the table holds, live or not yet swept.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// sweep removes the entries whose value was collected (dead), and returns the size of the next
// sweep: twice the entries left, so sweeping costs a constant amount per entry added. Table and
// Maps share it.
func sweep[E any](m map[uint64]E, dead func(E) bool) int {
	for h, e := range m {
		if dead(e) {
			delete(m, h)
		}
	}
	return max(2*len(m), 1024)
}
