package metal3machine

import (
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

type hostOpt func(*bmov1.BareMetalHost)

func testHost(name string, labels map[string]string, opts ...hostOpt) bmov1.BareMetalHost {
	h := bmov1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: labels}}
	h.Status.Provisioning.State = bmov1.StateAvailable
	h.Status.OperationalStatus = bmov1.OperationalStatusOK
	for _, o := range opts {
		o(&h)
	}
	return h
}

func inState(s bmov1.ProvisioningState) hostOpt {
	return func(h *bmov1.BareMetalHost) { h.Status.Provisioning.State = s }
}

func consumer(name string) hostOpt {
	return func(h *bmov1.BareMetalHost) {
		h.Spec.ConsumerRef = &corev1.ObjectReference{Kind: "Metal3Machine", Namespace: "ns", Name: name}
	}
}

func annotated(k, v string) hostOpt {
	return func(h *bmov1.BareMetalHost) { h.Annotations = map[string]string{k: v} }
}

func inError(msg string) hostOpt {
	return func(h *bmov1.BareMetalHost) {
		h.Status.OperationalStatus = bmov1.OperationalStatusError
		h.Status.ErrorMessage = msg
	}
}

// fleet is a namespace of hosts: four claimable with various labels, and one of each kind that
// must never be claimed even though it matches key1=value1.
func fleet() []bmov1.BareMetalHost {
	return []bmov1.BareMetalHost{
		testHost("h-a", map[string]string{"key1": "value1", "key2": "abc", "cpus": "8"}),
		testHost("h-b", map[string]string{"key1": "value2", "key2": "123", "cpus": "16"}),
		testHost("h-c", map[string]string{"key1": "value1", "cpus": "4"}),
		testHost("h-d", nil, inState(bmov1.StateReady)),
		testHost("x-claimed", map[string]string{"key1": "value1"}, consumer("other")),
		testHost("x-error", map[string]string{"key1": "value1"}, inError("BMC unreachable")),
		testHost("x-paused", map[string]string{"key1": "value1"}, annotated(bmov1.PausedAnnotation, "someone")),
		testHost("x-detached", map[string]string{"key1": "value1"}, annotated(bmov1.DetachedAnnotation, "")),
		testHost("x-provisioning", map[string]string{"key1": "value1"}, inState(bmov1.StateProvisioning)),
		testHost("x-inspecting", map[string]string{"key1": "value1"}, inState(bmov1.StateInspecting)),
		testHost("x-unhealthy", map[string]string{"key1": "value1"}, annotated(UnhealthyAnnotation, "")),
		testHost("x-unhealthy-old", map[string]string{"key1": "value1"}, annotated(UnhealthyAnnotationDeprecated, "")),
	}
}

func machineWith(sel infrav1.HostSelector) *infrav1.Metal3Machine {
	return &infrav1.Metal3Machine{
		ObjectMeta: metav1.ObjectMeta{Name: "m1", Namespace: "ns"},
		Spec:       infrav1.Metal3MachineSpec{HostSelector: sel},
	}
}

// claimableSet runs chooseHost until it finds nothing, skipping what it chose: the set of hosts
// the machine could ever be given.
func claimableSet(t *testing.T, m3m *infrav1.Metal3Machine, hosts []bmov1.BareMetalHost) []string {
	t.Helper()
	sel, err := m3m.Spec.HostSelector.Selector()
	if err != nil {
		t.Fatalf("selector: %v", err)
	}
	skip := sets.New[string]()
	for {
		h, why := chooseHost(m3m, "", hosts, sel, skip)
		if h == nil {
			if why == "" {
				t.Fatalf("no host and no reason")
			}
			return sets.List(skip)
		}
		skip.Insert(h.Name)
	}
}

func expr(key string, op infrav1.HostSelectorOperator, values ...string) infrav1.HostSelector {
	return infrav1.HostSelector{MatchExpressions: []infrav1.HostSelectorRequirement{{Key: key, Operator: op, Values: values}}}
}

func TestChooseHostEveryOperator(t *testing.T) {
	tests := []struct {
		name  string
		given infrav1.HostSelector
		want  []string
	}{
		{"empty selector: every claimable host", infrav1.HostSelector{}, []string{"h-a", "h-b", "h-c", "h-d"}},
		{"matchLabels", infrav1.HostSelector{MatchLabels: map[string]string{"key1": "value1"}}, []string{"h-a", "h-c"}},
		{"! (does not exist)", expr("key2", "!"), []string{"h-c", "h-d"}},
		{"DoesNotExist", expr("key2", "DoesNotExist"), []string{"h-c", "h-d"}},
		{"=", expr("key1", "=", "value1"), []string{"h-a", "h-c"}},
		{"==", expr("key1", "==", "value2"), []string{"h-b"}},
		{"in", expr("key2", "in", "abc", "123"), []string{"h-a", "h-b"}},
		{"In", expr("key2", "In", "abc"), []string{"h-a"}},
		{"!= includes hosts without the label", expr("key1", "!=", "value1"), []string{"h-b", "h-d"}},
		{"notin includes hosts without the label", expr("key2", "notin", "abc"), []string{"h-b", "h-c", "h-d"}},
		{"NotIn", expr("key2", "NotIn", "abc", "123"), []string{"h-c", "h-d"}},
		{"exists", expr("key2", "exists"), []string{"h-a", "h-b"}},
		{"Exists", expr("cpus", "Exists"), []string{"h-a", "h-b", "h-c"}},
		{"gt compares numbers, not strings", expr("cpus", "gt", "8"), []string{"h-b"}},
		{"lt compares numbers, not strings", expr("cpus", "lt", "10"), []string{"h-a", "h-c"}},
		{"labels and expressions are ANDed", infrav1.HostSelector{
			MatchLabels:      map[string]string{"key1": "value1"},
			MatchExpressions: []infrav1.HostSelectorRequirement{{Key: "cpus", Operator: "gt", Values: []string{"5"}}},
		}, []string{"h-a"}},
		{"nothing matches", expr("key2", "in", "zzz"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got := claimableSet(t, machineWith(tt.given), fleet())
			if tt.want == nil {
				g.Expect(got).To(BeEmpty())
				return
			}
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

func TestChooseHostSaysWhyNoneFits(t *testing.T) {
	tests := []struct {
		name  string
		given infrav1.HostSelector
		hosts []bmov1.BareMetalHost
		want  []string // substrings of the message
	}{
		{
			name:  "no host matches the selector",
			given: expr("key2", "in", "abc", "123"),
			hosts: []bmov1.BareMetalHost{testHost("h1", map[string]string{"key2": "zzz"})},
			want:  []string{"no host matches selector key2 in (123,abc) in namespace ns", "spec.hostSelector"},
		},
		{
			name:  "no host at all",
			given: infrav1.HostSelector{},
			hosts: nil,
			want:  []string{"no BareMetalHost in namespace ns"},
		},
		{
			name:  "matching hosts cannot be claimed",
			given: infrav1.HostSelector{MatchLabels: map[string]string{"key1": "value1"}},
			hosts: []bmov1.BareMetalHost{
				testHost("h1", map[string]string{"key1": "value1"}, inError("power on failed")),
				testHost("h2", map[string]string{"key1": "value1"}, consumer("m9")),
				testHost("h3", map[string]string{"key1": "value1"}, inState(bmov1.StateProvisioned)),
				testHost("h4", map[string]string{"key1": "value1"}, inState(bmov1.StateRegistering)),
			},
			want: []string{
				"none of the 4 hosts matching hostSelector key1=value1 can be claimed",
				"h1 is in error: power on failed", "h2 is claimed by Metal3Machine m9",
				`h3 is in state "provisioned", not available`, "and 1 more",
			},
		},
		{
			name:  "matching hosts are marked unhealthy",
			given: infrav1.HostSelector{MatchLabels: map[string]string{"key1": "value1"}},
			hosts: []bmov1.BareMetalHost{
				testHost("h1", map[string]string{"key1": "value1"}, annotated(UnhealthyAnnotation, "")),
				testHost("h2", map[string]string{"key1": "value1"}, annotated(UnhealthyAnnotation, "remediation gave up")),
				testHost("h3", map[string]string{"key1": "value1"}, consumer("m9")),
			},
			want: []string{
				"none of the 3 hosts matching hostSelector key1=value1 can be claimed: 2 are marked unhealthy (annotation capm3.metal3.io/unhealthy: h1, h2; remove it once the host is repaired)",
				"h3 is claimed by Metal3Machine m9",
			},
		},
		{
			name:  "the older annotation is named as it is",
			given: infrav1.HostSelector{},
			hosts: []bmov1.BareMetalHost{testHost("h1", nil, annotated(UnhealthyAnnotationDeprecated, ""))},
			want:  []string{"1 is marked unhealthy (annotation capi.metal3.io/unhealthy: h1;"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			m3m := machineWith(tt.given)
			sel, err := m3m.Spec.HostSelector.Selector()
			g.Expect(err).NotTo(HaveOccurred())
			h, why := chooseHost(m3m, "", tt.hosts, sel, sets.New[string]())
			g.Expect(h).To(BeNil())
			for _, w := range tt.want {
				g.Expect(why).To(ContainSubstring(w))
			}
		})
	}
}

func TestChooseHostPrefersTheHostAlreadyNamingTheMachine(t *testing.T) {
	g := NewWithT(t)
	hosts := fleet()
	// Claimed by m1 before a crash, and provisioning since: still m1's, whatever its state.
	hosts = append(hosts, testHost("z-mine", map[string]string{"key1": "other"}, consumer("m1"), inState(bmov1.StateProvisioning)))
	m3m := machineWith(infrav1.HostSelector{})
	sel, _ := m3m.Spec.HostSelector.Selector()
	h, _ := chooseHost(m3m, "", hosts, sel, sets.New[string]())
	g.Expect(h).NotTo(BeNil())
	g.Expect(h.Name).To(Equal("z-mine"))
}

func TestChooseHostIsDeterministicAndSpreadsMachines(t *testing.T) {
	g := NewWithT(t)
	sel, _ := infrav1.HostSelector{}.Selector()
	hosts := make([]bmov1.BareMetalHost, 0, 10)
	for _, n := range []string{"h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8", "h9"} {
		hosts = append(hosts, testHost(n, nil))
	}
	firsts := sets.New[string]()
	for _, m := range []string{"m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7"} {
		m3m := &infrav1.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Name: m, Namespace: "ns"}}
		first, _ := chooseHost(m3m, "", hosts, sel, sets.New[string]())
		reversed := slices.Clone(hosts)
		slices.Reverse(reversed)
		again, _ := chooseHost(m3m, "", reversed, sel, sets.New[string]())
		g.Expect(again.Name).To(Equal(first.Name), "the order of the list must not matter")
		firsts.Insert(first.Name)
	}
	// Eight machines starting on one host would make seven lose the first race.
	g.Expect(firsts.Len()).To(BeNumerically(">", 2))
}

func TestChooseHostPrefersTheMachinesFailureDomain(t *testing.T) {
	sel, _ := infrav1.HostSelector{}.Selector()
	m3m := &infrav1.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Name: "cp-0", Namespace: "ns"}}
	tests := []struct {
		name   string
		domain string
		given  []bmov1.BareMetalHost
		want   string
	}{
		{"a host in the domain wins", "rack-2", []bmov1.BareMetalHost{
			testHost("a", map[string]string{FailureDomainLabel: "rack-1"}),
			testHost("b", map[string]string{FailureDomainLabel: "rack-2"}),
			testHost("c", nil),
		}, "b"},
		{"none free in the domain: any host", "rack-2", []bmov1.BareMetalHost{
			testHost("a", map[string]string{FailureDomainLabel: "rack-1"}),
			testHost("b", map[string]string{FailureDomainLabel: "rack-2"}, consumer("other")),
		}, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Whatever the machine's name (which orders hosts of equal rank), the domain decides.
			for _, name := range []string{"cp-0", "cp-1", "cp-2", "cp-3", "cp-4", "cp-5"} {
				m3m.Name = name
				h, _ := chooseHost(m3m, tt.domain, tt.given, sel, sets.New[string]())
				NewWithT(t).Expect(h.Name).To(Equal(tt.want), "machine %s", name)
			}
		})
	}
}
