package v1beta2_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/labels"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

func expr(key string, op infrav1.HostSelectorOperator, values ...string) infrav1.HostSelectorRequirement {
	return infrav1.HostSelectorRequirement{Key: key, Operator: op, Values: values}
}

func TestHostSelectorMatchesHosts(t *testing.T) {
	// Hosts as a rack of BareMetalHosts would be labelled.
	hosts := map[string]labels.Set{
		"r1-small": {"rack": "r1", "size": "small", "cores": "8"},
		"r1-large": {"rack": "r1", "size": "large", "cores": "64", "gpu": "a100"},
		"r2-large": {"rack": "r2", "size": "large", "cores": "32"},
		"bare":     {},
	}
	tests := []struct {
		name  string
		given infrav1.HostSelector
		want  []string // hosts that match
	}{
		{"empty selector matches every host", infrav1.HostSelector{}, []string{"bare", "r1-large", "r1-small", "r2-large"}},
		{"matchLabels", infrav1.HostSelector{MatchLabels: map[string]string{"rack": "r1"}}, []string{"r1-large", "r1-small"}},
		{"matchLabels are ANDed", infrav1.HostSelector{MatchLabels: map[string]string{"rack": "r1", "size": "large"}}, []string{"r1-large"}},
		{"! key absent", sel(expr("gpu", infrav1.HostSelectorOpDoesNotExist)), []string{"bare", "r1-small", "r2-large"}},
		{"DoesNotExist", sel(expr("gpu", infrav1.HostSelectorOpDoesNotExistLong)), []string{"bare", "r1-small", "r2-large"}},
		{"= one value", sel(expr("size", infrav1.HostSelectorOpEquals, "large")), []string{"r1-large", "r2-large"}},
		{"== one value", sel(expr("size", infrav1.HostSelectorOpDoubleEquals, "small")), []string{"r1-small"}},
		{"!= also matches hosts without the label", sel(expr("size", infrav1.HostSelectorOpNotEquals, "large")), []string{"bare", "r1-small"}},
		{"in", sel(expr("rack", infrav1.HostSelectorOpIn, "r2", "r9")), []string{"r2-large"}},
		{"In", sel(expr("rack", infrav1.HostSelectorOpInLong, "r1")), []string{"r1-large", "r1-small"}},
		{"notin also matches hosts without the label", sel(expr("rack", infrav1.HostSelectorOpNotIn, "r1")), []string{"bare", "r2-large"}},
		{"NotIn", sel(expr("rack", infrav1.HostSelectorOpNotInLong, "r1", "r2")), []string{"bare"}},
		{"exists", sel(expr("gpu", infrav1.HostSelectorOpExists)), []string{"r1-large"}},
		{"Exists", sel(expr("cores", infrav1.HostSelectorOpExistsLong)), []string{"r1-large", "r1-small", "r2-large"}},
		{"gt compares as integers", sel(expr("cores", infrav1.HostSelectorOpGreaterThan, "16")), []string{"r1-large", "r2-large"}},
		{"lt compares as integers", sel(expr("cores", infrav1.HostSelectorOpLessThan, "32")), []string{"r1-small"}},
		{"gt with zero", sel(expr("cores", infrav1.HostSelectorOpGreaterThan, "0")), []string{"r1-large", "r1-small", "r2-large"}},
		{
			"labels and expressions are ANDed",
			infrav1.HostSelector{
				MatchLabels:      map[string]string{"size": "large"},
				MatchExpressions: []infrav1.HostSelectorRequirement{expr("cores", infrav1.HostSelectorOpLessThan, "40"), expr("gpu", infrav1.HostSelectorOpDoesNotExist)},
			},
			[]string{"r2-large"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			selector, err := tt.given.Selector()
			g.Expect(err).NotTo(HaveOccurred())
			var got []string
			for name, set := range hosts {
				if selector.Matches(set) {
					got = append(got, name)
				}
			}
			g.Expect(got).To(ConsistOf(tt.want))
		})
	}
}

func TestHostSelectorRefusesMalformedExpressions(t *testing.T) {
	tests := []struct {
		name  string
		given infrav1.HostSelector
		want  []string // substrings of the error
	}{
		{"gt without a value", sel(expr("cores", infrav1.HostSelectorOpGreaterThan)),
			[]string{"hostSelector.matchExpressions[0].values", `operator "gt" needs exactly one integer value`}},
		{"lt with a word", sel(expr("cores", infrav1.HostSelectorOpLessThan, "many")),
			[]string{`operator "lt" needs exactly one integer value`}},
		{"gt with two values", sel(expr("cores", infrav1.HostSelectorOpGreaterThan, "1", "2")),
			[]string{`operator "gt" needs exactly one integer value`}},
		{"gt past int64", sel(expr("cores", infrav1.HostSelectorOpGreaterThan, "9999999999999999999")),
			[]string{`operator "gt" needs exactly one integer value`}},
		{"gt with a sign (not a label value)", sel(expr("cores", infrav1.HostSelectorOpGreaterThan, "-1")),
			[]string{`operator "gt" needs exactly one integer value`}},
		{"in without values", sel(expr("rack", infrav1.HostSelectorOpIn)),
			[]string{`operator "in" needs at least one value`}},
		{"NotIn without values", sel(expr("rack", infrav1.HostSelectorOpNotInLong)),
			[]string{`operator "NotIn" needs at least one value`}},
		{"exists with a value", sel(expr("gpu", infrav1.HostSelectorOpExists, "a100")),
			[]string{`operator "exists" takes no values`}},
		{"! with a value", sel(expr("gpu", infrav1.HostSelectorOpDoesNotExist, "a100")),
			[]string{`operator "!" takes no values`}},
		{"= with two values", sel(expr("rack", infrav1.HostSelectorOpEquals, "r1", "r2")),
			[]string{`operator "=" needs exactly one value; use "in" or "notin" for several`}},
		{"!= without value", sel(expr("rack", infrav1.HostSelectorOpNotEquals)),
			[]string{`operator "!=" needs exactly one value`}},
		{"unknown operator", sel(expr("rack", "Gt", "1")),
			[]string{"hostSelector.matchExpressions[0].operator", `Unsupported value: "Gt"`, `"gt"`}},
		{"bad key", sel(expr("rack name", infrav1.HostSelectorOpExists)),
			[]string{"hostSelector.matchExpressions[0].key"}},
		{"bad matchLabels value", infrav1.HostSelector{MatchLabels: map[string]string{"rack": "r 1"}},
			[]string{"hostSelector.matchLabels[rack]"}},
		{"second expression named", sel(expr("rack", infrav1.HostSelectorOpIn, "r1"), expr("gpu", infrav1.HostSelectorOpExistsLong, "x")),
			[]string{"hostSelector.matchExpressions[1].values", `operator "Exists" takes no values`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			selector, err := tt.given.Selector()
			g.Expect(selector).To(BeNil())
			g.Expect(err).To(HaveOccurred())
			for _, want := range tt.want {
				g.Expect(err.Error()).To(ContainSubstring(want))
			}
		})
	}
}

func TestHostSelectorStringIsStable(t *testing.T) {
	g := NewWithT(t)
	s := infrav1.HostSelector{
		MatchLabels:      map[string]string{"size": "large", "rack": "r1", "arch": "x86_64"},
		MatchExpressions: []infrav1.HostSelectorRequirement{expr("gpu", infrav1.HostSelectorOpDoesNotExistLong)},
	}
	selector, err := s.Selector()
	g.Expect(err).NotTo(HaveOccurred())
	// The labels package sorts requirements by key; the long form becomes "!".
	g.Expect(selector.String()).To(Equal("arch=x86_64,!gpu,rack=r1,size=large"))
}

func sel(exprs ...infrav1.HostSelectorRequirement) infrav1.HostSelector {
	return infrav1.HostSelector{MatchExpressions: exprs}
}
