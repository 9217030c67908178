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
	v, ok = w.Unseen("a", "1")
	g.Expect(ok && v == "ready").To(BeTrue(), "asking again does not forget it")

	_, ok = w.Unseen("a", "2")
	g.Expect(ok).To(BeFalse(), "a newer copy shows the write")
	_, ok = w.Unseen("a", "1")
	g.Expect(ok).To(BeFalse(), "and the write is forgotten once seen")
	g.Expect(w.Len()).To(BeZero())

	w.Wrote("b", "5", "x")
	w.Wrote("c", "6", "y")
	w.Retain(func(k string) bool { return k == "c" })
	_, ok = w.Unseen("b", "5")
	g.Expect(ok).To(BeFalse(), "a write Retain rejected is forgotten")
	_, ok = w.Unseen("c", "6")
	g.Expect(ok).To(BeTrue(), "a write Retain kept is remembered")
}
