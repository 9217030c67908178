package metal3datatemplate

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

func TestUsed(t *testing.T) {
	tests := []struct {
		name  string
		given []string
		want  map[int32]bool
	}{
		{name: "no data", given: nil, want: map[int32]bool{}},
		{name: "indexes from names", given: []string{"tmpl-0", "tmpl-2", "tmpl-10"}, want: map[int32]bool{0: true, 2: true, 10: true}},
		{
			name:  "names of other templates and odd spellings take nothing",
			given: []string{"other-1", "tmpl-01", "tmpl--1", "tmpl-x", "tmpl-3-1", "tmpl-4"},
			want:  map[int32]bool{4: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(used("tmpl", tt.given)).To(Equal(tt.want))
		})
	}
}

func TestAssign(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	tests := []struct {
		name   string
		claims []waiting
		taken  map[int32]bool
		want   map[string]int32
	}{
		{name: "nothing to do", want: map[string]int32{}},
		{
			name:   "first claims count from zero, oldest first",
			claims: []waiting{{"c", at(3)}, {"a", at(1)}, {"b", at(2)}},
			want:   map[string]int32{"a": 0, "b": 1, "c": 2},
		},
		{
			name:   "same creation time: by name",
			claims: []waiting{{"m-2", at(1)}, {"m-1", at(1)}},
			want:   map[string]int32{"m-1": 0, "m-2": 1},
		},
		{
			name:   "gaps are reused before the top grows",
			claims: []waiting{{"x", at(1)}, {"y", at(2)}, {"z", at(3)}},
			taken:  map[int32]bool{0: true, 2: true, 3: true, 5: true},
			want:   map[string]int32{"x": 1, "y": 4, "z": 6},
		},
		{
			name:   "an index refused as AlreadyExists is skipped",
			claims: []waiting{{"x", at(1)}},
			taken:  map[int32]bool{0: true},
			want:   map[string]int32{"x": 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			taken := map[int32]bool{}
			for k, v := range tt.taken {
				taken[k] = v
			}
			g.Expect(assign(tt.claims, taken)).To(Equal(tt.want))
			g.Expect(taken).To(Equal(nonNil(tt.taken)), "assign must not mark indexes taken itself: the caller does once a create succeeds")
		})
	}
}

func nonNil(m map[int32]bool) map[int32]bool {
	if m == nil {
		return map[int32]bool{}
	}
	return m
}

func TestStatusIndexes(t *testing.T) {
	tests := []struct {
		name  string
		given []holder
		want  []infrav1.IndexEntry
	}{
		{name: "none", given: nil, want: []infrav1.IndexEntry{}},
		{
			name:  "ordered by index",
			given: []holder{{Index: 3, Claim: "c"}, {Index: 0, Claim: "a"}, {Index: 1, Claim: "b"}},
			want:  []infrav1.IndexEntry{{Name: "a", Index: 0}, {Name: "b", Index: 1}, {Name: "c", Index: 3}},
		},
		{
			name:  "one entry per index",
			given: []holder{{Index: 1, Claim: "b"}, {Index: 1, Claim: "a"}},
			want:  []infrav1.IndexEntry{{Name: "a", Index: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(statusIndexes(tt.given)).To(Equal(tt.want))
		})
	}
}
