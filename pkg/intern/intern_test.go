package intern

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

func same(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

// Equal strings decoded separately end up sharing one copy, and interning a string already
// canonical writes nothing.
func TestInternSharesEqualStrings(t *testing.T) {
	tab := New()
	a, b := strings.Clone("cluster.x-k8s.io/cluster-name"), strings.Clone("cluster.x-k8s.io/cluster-name")
	if same(a, b) {
		t.Fatal("the test's two strings share bytes before interning")
	}
	tab.Intern(&a)
	tab.Intern(&b)
	if !same(a, b) || a != "cluster.x-k8s.io/cluster-name" {
		t.Fatalf("two equal strings interned do not share their bytes (or changed): %q %q", a, b)
	}
	before := a
	tab.Intern(&a)
	if !same(a, before) {
		t.Error("interning a canonical string again replaced it")
	}
	empty := ""
	tab.Intern(&empty)
	if empty != "" || !tab.IsCanonical("") {
		t.Error("the empty string is not left alone")
	}
}

// A canonical string held by an object stays the canonical one across collections (what Go's
// unique.Make(s).Value() does not do: its copy is forgotten once no handle is left), so an object
// interned before a collection and one interned after it share, and the first is not rewritten.
func TestCanonicalSurvivesCollectionWhileHeld(t *testing.T) {
	tab := New()
	held := strings.Clone("metal3-ipam-pool-provisioning")
	tab.Intern(&held)
	runtime.GC()
	runtime.GC()
	later := strings.Clone("metal3-ipam-pool-provisioning")
	tab.Intern(&later)
	if !same(held, later) {
		t.Error("a string interned after a collection got new bytes although the canonical ones are still held")
	}
	if !tab.IsCanonical(held) {
		t.Error("a held canonical string stopped being canonical after a collection")
	}
}

// Strings nothing holds any more leave the table: interning a stream of distinct names (machines
// created and deleted) keeps the table at the size of what is live, not of all ever seen.
func TestTableForgetsCollectedStrings(t *testing.T) {
	tab := New()
	for round := range 20 {
		for i := range 1000 {
			s := fmt.Sprintf("machine-%d-%d", round, i)
			tab.Intern(&s)
		}
		runtime.GC()
	}
	if n := tab.Len(); n > 4096 {
		t.Errorf("the table holds %d entries after 20,000 distinct strings, none of them held: it keeps strings nothing uses", n)
	}
	kept := make([]string, 3000)
	for i := range kept {
		kept[i] = fmt.Sprintf("kept-%d", i)
		tab.Intern(&kept[i])
	}
	runtime.GC()
	for i := range kept {
		c := fmt.Sprintf("kept-%d", i)
		if tab.Intern(&c); !same(c, kept[i]) {
			t.Fatalf("%q, still held, lost its canonical copy in a sweep", kept[i])
		}
	}
}
