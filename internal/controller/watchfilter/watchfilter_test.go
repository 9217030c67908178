package watchfilter

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

func TestMatches(t *testing.T) {
	labelled := &infrav1.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"cluster.x-k8s.io/watch-filter": "team-a"}}}
	other := &infrav1.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"cluster.x-k8s.io/watch-filter": "team-b"}}}
	bare := &infrav1.Metal3Machine{}
	tests := []struct {
		name   string
		filter string
		obj    *infrav1.Metal3Machine
		want   bool
	}{
		{"no filter takes everything", "", bare, true},
		{"no filter takes a labelled object too", "", other, true},
		{"filter takes its own label", "team-a", labelled, true},
		{"filter passes over another value", "team-a", other, false},
		{"filter passes over an unlabelled object", "team-a", bare, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(Matches(tt.obj, tt.filter)).To(Equal(tt.want))
			g.Expect(Predicate(tt.filter).Create(event.CreateEvent{Object: tt.obj})).To(Equal(tt.want))
		})
	}
}

func TestCarry(t *testing.T) {
	labelled := &infrav1.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"cluster.x-k8s.io/watch-filter": "team-a", "other": "x"}}}
	bare := &infrav1.Metal3Machine{}
	tests := []struct {
		name   string
		labels map[string]string
		from   *infrav1.Metal3Machine
		want   map[string]string
	}{
		{"the label goes to a new map", nil, labelled, map[string]string{"cluster.x-k8s.io/watch-filter": "team-a"}},
		{"the label joins the others", map[string]string{"a": "b"}, labelled, map[string]string{"a": "b", "cluster.x-k8s.io/watch-filter": "team-a"}},
		{"nothing to carry leaves nil", nil, bare, nil},
		{"nothing to carry leaves the others", map[string]string{"a": "b"}, bare, map[string]string{"a": "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got := Carry(tt.labels, tt.from)
			g.Expect(got).To(Equal(tt.want))
			g.Expect(Matches(&infrav1.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Labels: got}}, "team-a")).To(Equal(Matches(tt.from, "team-a")))
		})
	}
}
