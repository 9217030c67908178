package manager

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// countingMapper counts the RESTMapping questions that reach it.
type countingMapper struct {
	meta.RESTMapper
	asked int
}

func (c *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	c.asked++
	return c.RESTMapper.RESTMapping(gk, versions...)
}

// A kind found once is answered from memory, the same answer; a kind not found is asked again
// each time, so a CRD installed later is found.
func TestRememberingMapper(t *testing.T) {
	gv := schema.GroupVersion{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2"}
	base := meta.NewDefaultRESTMapper([]schema.GroupVersion{gv})
	base.Add(gv.WithKind("Metal3Data"), meta.RESTScopeNamespace)
	under := &countingMapper{RESTMapper: base}
	m := &rememberingMapper{RESTMapper: under, found: map[mappingKey]meta.RESTMapping{}}

	gk := schema.GroupKind{Group: gv.Group, Kind: "Metal3Data"}
	want, err := base.RESTMapping(gk, "v1beta2")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		got, err := m.RESTMapping(gk, "v1beta2")
		if err != nil || *got != *want {
			t.Fatalf("answer %d: %+v, %v; want %+v", i, got, err, want)
		}
	}
	if under.asked != 1 {
		t.Fatalf("the underlying mapper was asked %d times, want once", under.asked)
	}

	missing := schema.GroupKind{Group: gv.Group, Kind: "Metal3Later"}
	for i := 0; i < 2; i++ {
		if _, err := m.RESTMapping(missing, "v1beta2"); !meta.IsNoMatchError(err) {
			t.Fatalf("a kind not served: %v, want a no-match error", err)
		}
	}
	base.Add(gv.WithKind("Metal3Later"), meta.RESTScopeNamespace)
	if _, err := m.RESTMapping(missing, "v1beta2"); err != nil {
		t.Fatalf("a kind served later is still not found: %v", err)
	}
	if under.asked != 4 {
		t.Fatalf("the underlying mapper was asked %d times, want 4 (misses are not remembered)", under.asked)
	}
}
