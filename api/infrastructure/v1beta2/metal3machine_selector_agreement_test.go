package v1beta2_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// The machine controller trusts that an admitted Metal3Machine yields a selector. This test
// holds the CRD's rules and HostSelector.Selector to the same answers, edge cases included.
func TestHostSelectorAdmissionAgreesWithSelector(t *testing.T) {
	long63 := strings.Repeat("a", 63)
	tests := []struct {
		name  string
		given infrav1.HostSelector
	}{
		{"empty", infrav1.HostSelector{}},
		{"prefixed key", sel(expr("example.com/rack", infrav1.HostSelectorOpExists))},
		{"key with upper case name", sel(expr("Rack_1.a", infrav1.HostSelectorOpExists))},
		{"key prefix with upper case", sel(expr("Example.com/rack", infrav1.HostSelectorOpExists))},
		{"key ending in a dash", sel(expr("rack-", infrav1.HostSelectorOpExists))},
		{"key of 63 characters", sel(expr(long63, infrav1.HostSelectorOpExists))},
		{"key of 64 characters", sel(expr(long63+"a", infrav1.HostSelectorOpExists))},
		{"two slashes", sel(expr("a/b/c", infrav1.HostSelectorOpExists))},
		{"empty value for =", sel(expr("rack", infrav1.HostSelectorOpEquals, ""))},
		{"value of 63 characters", sel(expr("rack", infrav1.HostSelectorOpIn, long63))},
		{"value of 64 characters", sel(expr("rack", infrav1.HostSelectorOpIn, long63+"a"))},
		{"value starting with a dot", sel(expr("rack", infrav1.HostSelectorOpIn, ".r1"))},
		{"gt with 18 digits", sel(expr("cores", infrav1.HostSelectorOpGreaterThan, strings.Repeat("9", 18)))},
		{"gt with 19 digits", sel(expr("cores", infrav1.HostSelectorOpGreaterThan, strings.Repeat("9", 19)))},
		{"gt with a sign", sel(expr("cores", infrav1.HostSelectorOpGreaterThan, "+8"))},
		{"lt with leading zeros", sel(expr("cores", infrav1.HostSelectorOpLessThan, "007"))},
		{"notin with values", sel(expr("rack", infrav1.HostSelectorOpNotIn, "r1", "r2"))},
		{"Exists with empty values", sel(expr("rack", infrav1.HostSelectorOpExistsLong))},
		{"!= with two values", sel(expr("rack", infrav1.HostSelectorOpNotEquals, "a", "b"))},
		{"matchLabels with prefixed key", infrav1.HostSelector{MatchLabels: map[string]string{"example.com/rack": "r1"}}},
		{"matchLabels with bad key", infrav1.HostSelector{MatchLabels: map[string]string{"-rack": "r1"}}},
		{"matchLabels with empty value", infrav1.HostSelector{MatchLabels: map[string]string{"rack": ""}}},
	}
	ctx := context.Background()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			_, selectorErr := tt.given.Selector()
			m := &infrav1.Metal3Machine{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("m3m-agree-%d", i), Namespace: "default"},
				Spec: infrav1.Metal3MachineSpec{
					CustomDeploy: &infrav1.CustomDeploy{Method: "install"},
					HostSelector: tt.given,
				},
			}
			admissionErr := env.Client.Create(ctx, m)
			g.Expect(admissionErr == nil).To(Equal(selectorErr == nil),
				"admission said %v, Selector said %v", admissionErr, selectorErr)
		})
	}
}

// The one documented exception: the characters of matchLabels values are checked by Selector
// only, because a CEL pattern over map values exceeds the API server's cost budget.
func TestMatchLabelsValueCharactersAreCheckedBySelector(t *testing.T) {
	g := NewWithT(t)
	s := infrav1.HostSelector{MatchLabels: map[string]string{"rack": "r 1"}}
	_, err := s.Selector()
	g.Expect(err).To(MatchError(ContainSubstring("hostSelector.matchLabels[rack]")))

	m := &infrav1.Metal3Machine{
		ObjectMeta: metav1.ObjectMeta{Name: "m3m-agree-exception", Namespace: "default"},
		Spec:       infrav1.Metal3MachineSpec{CustomDeploy: &infrav1.CustomDeploy{Method: "install"}, HostSelector: s},
	}
	g.Expect(env.Client.Create(context.Background(), m)).To(Succeed())
}
