package waits

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestUnwritten(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		age      time.Duration
		reported bool
		quiet    time.Duration
		want     time.Duration
	}{
		{name: "a new object's wait waits", age: 2 * time.Second, want: DefaultQuiet - 2*time.Second},
		{name: "a wait that lasted is written", age: DefaultQuiet + time.Second, want: 0},
		{name: "a status saying something else is corrected at once", age: time.Second, reported: true, want: 0},
		{name: "a shorter quiet", age: time.Second, quiet: 3 * time.Second, want: 2 * time.Second},
		{name: "negative quiet writes every wait", age: 0, quiet: -1, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(Unwritten(t0, tt.reported, tt.quiet, t0.Add(tt.age))).To(Equal(tt.want))
		})
	}
}
