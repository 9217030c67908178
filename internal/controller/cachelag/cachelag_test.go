package cachelag

import (
	"maps"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestAnUpdateIsUnseenUntilTheCacheShowsALaterVersion(t *testing.T) {
	g := NewWithT(t)
	var w Writes[string]
	_, ok := w.Unseen("a", "10")
	g.Expect(ok).To(BeFalse(), "nothing written: the cache is trusted")

	w.Wrote("a", "10", "ready")
	v, ok := w.Unseen("a", "10")
	g.Expect(ok).To(BeTrue(), "the cache still has the version the write was made against")
	g.Expect(v).To(Equal("ready"))
	_, ok = w.Unseen("a", "9")
	g.Expect(ok).To(BeTrue(), "an older copy, read before the write, does not show it either")
	_, ok = w.Unseen("a", "")
	g.Expect(ok).To(BeTrue(), "nor does a cache without the object")

	_, ok = w.Unseen("a", "11")
	g.Expect(ok).To(BeFalse(), "a later version shows the write, or something newer")
	_, ok = w.Unseen("a", "10")
	g.Expect(ok).To(BeFalse(), "and the record is gone: the cache never goes back")
	g.Expect(w.Len()).To(BeZero())
}

// Two writes in a row, the second made while the cache still showed neither (the writer took
// its copy from this memory): the cache catching up to the first write does not show the
// second. A record by the version the write made holds until the cache shows that version.
func TestAWriteRecordedByTheVersionItMadeHoldsUntilTheCacheShowsThatVersion(t *testing.T) {
	g := NewWithT(t)
	var w Writes[string]
	w.WroteAt("nd", "12", "first") // made against the cache's 10
	v, ok := w.Unseen("nd", "10")
	g.Expect(ok).To(BeTrue())
	g.Expect(v).To(Equal("first"))
	w.WroteAt("nd", "15", "second") // made against "first", which the cache did not show yet
	v, ok = w.Unseen("nd", "12")
	g.Expect(ok).To(BeTrue(), "the cache shows the first write, not the second")
	g.Expect(v).To(Equal("second"))
	_, ok = w.Unseen("nd", "15")
	g.Expect(ok).To(BeFalse(), "the cache shows the version the second write made")

	w.WroteAt("x", "not-a-number", "v")
	_, ok = w.Unseen("x", "other")
	g.Expect(ok).To(BeTrue(), "a version that is no integer shows the write only when equal")
	_, ok = w.Unseen("x", "not-a-number")
	g.Expect(ok).To(BeFalse())
}

func TestVersionsCompareAsNumbersNotAsText(t *testing.T) {
	g := NewWithT(t)
	var w Writes[int]
	w.Wrote("a", "99", 1)
	_, ok := w.Unseen("a", "100")
	g.Expect(ok).To(BeFalse(), "100 is later than 99")

	w.Wrote("b", "not-a-number", 2)
	_, ok = w.Unseen("b", "not-a-number")
	g.Expect(ok).To(BeTrue(), "a version that is no integer is compared for equality")
	_, ok = w.Unseen("b", "other")
	g.Expect(ok).To(BeFalse())
}

func TestACreateIsUnseenUntilTheCacheHasTheObject(t *testing.T) {
	g := NewWithT(t)
	var w Writes[struct{}]
	w.Wrote("new", "", struct{}{})
	_, ok := w.Unseen("new", "")
	g.Expect(ok).To(BeTrue(), "created, and not in the cache yet")
	_, ok = w.Unseen("new", "1")
	g.Expect(ok).To(BeFalse(), "any copy in the cache shows the create")
}

func TestARecordExpires(t *testing.T) {
	g := NewWithT(t)
	clk := clocktesting.NewFakePassiveClock(time.Now())
	w := Writes[string]{clock: clk}
	w.Wrote("a", "5", "x")
	clk.SetTime(clk.Now().Add(Expiry - time.Second))
	_, ok := w.Unseen("a", "5")
	g.Expect(ok).To(BeTrue(), "within the expiry the write is on its way")
	clk.SetTime(clk.Now().Add(time.Second))
	_, ok = w.Unseen("a", "5")
	g.Expect(ok).To(BeFalse(), "past the expiry the cache is believed, whatever it shows")
	g.Expect(w.Len()).To(BeZero())
}

func TestRecordsNobodyAsksAboutAreSweptByLaterWrites(t *testing.T) {
	g := NewWithT(t)
	clk := clocktesting.NewFakePassiveClock(time.Now())
	w := Writes[int]{clock: clk}
	w.Wrote("gone-1", "", 1)
	w.Wrote("gone-2", "3", 2)
	clk.SetTime(clk.Now().Add(Expiry))
	g.Expect(maps.Collect(w.All())).To(BeEmpty(), "expired records are not listed")
	w.Wrote("b", "7", 3)
	g.Expect(w.Len()).To(Equal(1), "the expired records went with the next write")
}

func TestForgetAndAll(t *testing.T) {
	g := NewWithT(t)
	var w Writes[string]
	w.Wrote("a", "1", "x")
	w.Wrote("b", "2", "y")
	for k := range w.All() {
		if k == "a" {
			w.Forget(k) // All works on a copy: forgetting while iterating is fine
		}
	}
	g.Expect(maps.Collect(w.All())).To(Equal(map[string]string{"b": "y"}))
	w.Wrote("b", "3", "z")
	v, ok := w.Unseen("b", "3")
	g.Expect(ok && v == "z").To(BeTrue(), "a new write replaces the record")
}
