package intern

import (
	"hash/maphash"
	"maps"
	"sync"
	"unsafe"
	"weak"
)

// Maps is a set of canonical string maps: Canonical hands every map with the same entries the
// same map, for as long as anything still holds it, as Table does for strings. Thousands of
// cached objects carry the same few labels (a cluster's name); each label map a decoder makes is
// a few hundred bytes of its own, shared they cost one.
//
// A map handed out by Canonical is shared: nobody may write it. The zero value is not usable;
// use NewMaps.
type Maps struct {
	seed maphash.Seed
	mu   sync.Mutex
	m    map[uint64]weak.Pointer[byte]
	// sweepAt is the size at which dead entries are next removed.
	sweepAt int
}

// NewMaps returns an empty set.
func NewMaps() *Maps {
	return &Maps{seed: maphash.MakeSeed(), m: map[uint64]weak.Pointer[byte]{}, sweepAt: 1024}
}

// Canonical returns the map equal to m that every other equal map Canonical returned shares,
// while it is held: the first time a set of entries is met (or after its map was collected) m
// itself becomes the canonical one. A map whose hash another live map with other entries
// already takes is returned as it is, and so is an empty one.
func (s *Maps) Canonical(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	h := s.hash(m)
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.m[h].Value(); p != nil {
		if c := mapAt(p); maps.Equal(c, m) {
			return c
		}
		return m // another map with the same hash: left as it is
	}
	s.m[h] = weak.Make(mapStart(m))
	if len(s.m) >= s.sweepAt {
		s.sweepAt = sweep(s.m, func(p weak.Pointer[byte]) bool { return p.Value() == nil })
	}
	return m
}

// SameMap reports whether a and b are the same map (not only equal).
func SameMap(a, b map[string]string) bool { return mapStart(a) == mapStart(b) }

// Len is how many maps the set holds, live or not yet swept.
func (s *Maps) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// hash is the same for maps with the same entries, whatever their order.
func (s *Maps) hash(m map[string]string) uint64 {
	var sum uint64
	for k, v := range m {
		sum += maphash.String(s.seed, k)*31 ^ maphash.String(s.seed, v)
	}
	return sum
}

// mapStart is the address of the runtime's object behind a map value (a map value is a pointer
// to it), for a weak pointer: the map lives while that object does.
func mapStart(m map[string]string) *byte {
	return *(**byte)(unsafe.Pointer(&m)) //nolint:gosec // a map value is one pointer to the runtime's map object
}

// mapAt is the map whose runtime object starts at p (mapStart's inverse).
func mapAt(p *byte) map[string]string {
	return *(*map[string]string)(unsafe.Pointer(&p)) //nolint:gosec // p came from mapStart and is live
}
