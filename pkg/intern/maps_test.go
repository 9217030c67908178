package intern

import (
	"fmt"
	"runtime"
	"testing"
)

// Maps with the same entries, built apart and in any order, come back as one map; maps that
// differ by a key or a value do not, and an empty map is left as it is.
func TestMapsShareEqualMaps(t *testing.T) {
	s := NewMaps()
	a := map[string]string{"cluster.x-k8s.io/cluster-name": "prod-east", "role": "worker"}
	b := map[string]string{}
	b["role"] = "worker"
	b["cluster.x-k8s.io/cluster-name"] = "prod-east"
	ca, cb := s.Canonical(a), s.Canonical(b)
	if !SameMap(ca, a) || !SameMap(cb, a) {
		t.Error("two maps with the same entries are not one map after Canonical")
	}
	for _, other := range []map[string]string{
		{"cluster.x-k8s.io/cluster-name": "prod-west", "role": "worker"},
		{"cluster.x-k8s.io/cluster-name": "prod-east"},
		{"cluster.x-k8s.io/cluster-name": "prod-east", "role": "worker", "rack": "7"},
		{"cluster.x-k8s.io/cluster-name": "worker", "role": "prod-east"},
	} {
		if c := s.Canonical(other); !SameMap(c, other) {
			t.Errorf("%v was given the map of other entries: %v", other, c)
		}
	}
	empty := map[string]string{}
	if c := s.Canonical(empty); !SameMap(c, empty) || s.Canonical(nil) != nil {
		t.Error("an empty or nil map was replaced")
	}
}

// A canonical map stays canonical while it is held, through collections; once nothing holds
// it, the next equal map takes its place, and the set keeps only what is live.
func TestMapsForgetCollectedMaps(t *testing.T) {
	s := NewMaps()
	held := s.Canonical(map[string]string{"cluster.x-k8s.io/cluster-name": "prod-east"})
	runtime.GC()
	runtime.GC()
	if later := s.Canonical(map[string]string{"cluster.x-k8s.io/cluster-name": "prod-east"}); !SameMap(later, held) {
		t.Error("a held canonical map was forgotten across a collection")
	}
	for round := range 20 {
		for i := range 1000 {
			s.Canonical(map[string]string{"machine": fmt.Sprintf("m-%d-%d", round, i)})
		}
		runtime.GC()
	}
	if n := s.Len(); n > 4096 {
		t.Errorf("the set holds %d maps after 20,000 distinct ones, none of them held: it keeps maps nothing uses", n)
	}
	runtime.KeepAlive(held)
}
