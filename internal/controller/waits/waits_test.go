package waits

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestUnwritten(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		age       time.Duration
		servedAgo time.Duration // 0: nothing served
		reported  bool
		quiet     time.Duration
		want      time.Duration
	}{
		{name: "a new object's wait waits", age: 2 * time.Second, want: DefaultQuiet - 2*time.Second},
		{name: "a wait that lasted is written", age: DefaultQuiet + time.Second, want: 0},
		{name: "a status saying something else is corrected at once", age: time.Second, reported: true, want: 0},
		{name: "a shorter quiet", age: time.Second, quiet: 3 * time.Second, want: 2 * time.Second},
		{name: "negative quiet writes every wait", age: 0, quiet: -1, want: 0},
		{name: "a lasting wait is held while its queue moves", age: 2 * time.Minute, servedAgo: time.Second, want: DefaultQuiet - time.Second},
		{name: "and written once nothing was served for a quiet period", age: 2 * time.Minute, servedAgo: DefaultQuiet + time.Second, want: 0},
		{name: "a queue that moves holds a wait at most MaxHeld quiet periods", age: MaxHeld*DefaultQuiet - 5*time.Second, servedAgo: time.Second, want: 5 * time.Second},
		{name: "after that it is written however busy the namespace", age: MaxHeld*DefaultQuiet + time.Second, servedAgo: time.Second, want: 0},
		{name: "a reported status is corrected at once, busy or not", age: time.Second, servedAgo: time.Second, reported: true, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := t0.Add(tt.age)
			var served time.Time
			if tt.servedAgo > 0 {
				served = now.Add(-tt.servedAgo)
			}
			NewWithT(t).Expect(Unwritten(t0, served, tt.reported, tt.quiet, now)).To(Equal(tt.want))
		})
	}
}

func TestProgress(t *testing.T) {
	g := NewWithT(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var p Progress
	g.Expect(p.LastServed("a").IsZero()).To(BeTrue(), "nothing served yet")
	p.Served("a", t0.Add(2*time.Second))
	p.Served("a", t0.Add(time.Second))
	g.Expect(p.LastServed("a")).To(Equal(t0.Add(2*time.Second)), "the latest serve counts, in whatever order they are told")
	g.Expect(p.LastServed("b").IsZero()).To(BeTrue(), "each namespace keeps its own")
}

func TestRewrites(t *testing.T) {
	g := NewWithT(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var w Rewrites
	g.Expect(w.Hold("a", true, 0, t0)).To(BeZero(), "words this process never wrote are written at once")
	g.Expect(w.Hold("a", true, 0, t0.Add(5*time.Second))).To(Equal(DefaultQuiet-5*time.Second), "new words for the same wait are held for the quiet period")
	g.Expect(w.Hold("a", false, 0, t0.Add(6*time.Second))).To(BeZero(), "a new reason is written at once")
	g.Expect(w.Hold("a", true, 0, t0.Add(6*time.Second+DefaultQuiet))).To(BeZero(), "after the quiet period the words are written")
	g.Expect(w.Hold("b", true, 10*time.Second, t0)).To(BeZero(), "each object keeps its own clock")
	g.Expect(w.Hold("b", true, 10*time.Second, t0.Add(time.Second))).To(Equal(9 * time.Second))
	w.Forget("b")
	g.Expect(w.Hold("b", true, 10*time.Second, t0.Add(2*time.Second))).To(BeZero(), "a forgotten object starts afresh")
}
