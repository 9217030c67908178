package cachelag

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestWrites(t *testing.T) {
	g := NewWithT(t)
	var w Writes[string]
	_, ok := w.Unseen("a", "1")
	g.Expect(ok).To(BeFalse(), "nothing written: the cache is trusted")

	w.Wrote("a", "1", "ready")
	v, ok := w.Unseen("a", "1")
	g.Expect(ok).To(BeTrue(), "the cache still has the version the write was made against")
	g.Expect(v).To(Equal("ready"))

	_, ok = w.Unseen("a", "2")
	g.Expect(ok).To(BeFalse(), "another version shows the write, or something newer")
	_, ok = w.Unseen("a", "0")
	g.Expect(ok).To(BeFalse(), "an older copy, read before the write, is not the version written against either")
	v, ok = w.Unseen("a", "1")
	g.Expect(ok && v == "ready").To(BeTrue(), "and looking at other versions forgets nothing: a reconcile holding an older copy must not erase another's record")

	w.Wrote("a", "2", "left")
	_, ok = w.Unseen("a", "1")
	g.Expect(ok).To(BeFalse(), "a new write replaces the record")
	v, _ = w.Unseen("a", "2")
	g.Expect(v).To(Equal("left"))

	w.Forget("a")
	_, ok = w.Unseen("a", "2")
	g.Expect(ok).To(BeFalse(), "a forgotten object has no record")

	w.Wrote("b", "5", "x")
	w.Wrote("c", "6", "y")
	w.Retain(func(k string) bool { return k == "c" })
	g.Expect(w.Len()).To(Equal(1))
	_, ok = w.Unseen("c", "6")
	g.Expect(ok).To(BeTrue(), "a record Retain kept is remembered")
}
