package metal3machine

import (
	"context"
	"fmt"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// Twenty machines race for ten matching hosts: every matching host goes to exactly one machine,
// no machine gets two, the other ten wait saying why, and non-matching hosts stay free.
func TestTwentyMachinesTenHosts(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	cluster := createCluster(t, ns, "c1", clusterOpts{})
	for i := range 10 {
		createHost(t, ns, fmt.Sprintf("match-%02d", i), map[string]string{"pool": "workers"}, bmov1.StateAvailable)
	}
	for i := range 3 {
		createHost(t, ns, fmt.Sprintf("other-%02d", i), map[string]string{"pool": "storage"}, bmov1.StateAvailable)
	}

	sel := infrav1.HostSelector{MatchLabels: map[string]string{"pool": "workers"}}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			createMachine(t, cluster, fmt.Sprintf("m-%02d", i), machineOpts{bootstrap: "b", selector: sel})
		})
	}
	wg.Wait()

	assignments := func(g Gomega) (byMachine map[string]string, waiting []string) {
		machines := &infrav1.Metal3MachineList{}
		g.Expect(env.Client.List(ctx, machines, client.InNamespace(ns))).To(Succeed())
		g.Expect(machines.Items).To(HaveLen(20))
		byMachine = map[string]string{}
		for _, m := range machines.Items {
			if h := m.Annotations[infrav1.HostAnnotation]; h != "" {
				byMachine[m.Name] = h
				continue
			}
			c := condition(&m, infrav1.AssociateBareMetalHostCondition)
			if c.Status == metav1.ConditionFalse && c.Reason == infrav1.AssociateBareMetalHostFailedReason {
				waiting = append(waiting, m.Name)
			}
		}
		return byMachine, waiting
	}
	g.Eventually(func(g Gomega) {
		byMachine, waiting := assignments(g)
		g.Expect(byMachine).To(HaveLen(10))
		g.Expect(waiting).To(HaveLen(10), "the machines without a host say why")
	}, "60s", poll).Should(Succeed())

	// Nothing moves after the dust settles.
	var byMachine map[string]string
	g.Consistently(func(g Gomega) {
		byMachine, _ = assignments(g)
		g.Expect(byMachine).To(HaveLen(10))
	}, "1s", poll).Should(Succeed())

	hosts := &bmov1.BareMetalHostList{}
	g.Expect(env.Client.List(ctx, hosts, client.InNamespace(ns))).To(Succeed())
	claimedBy := map[string]string{}
	for _, h := range hosts.Items {
		if h.Labels["pool"] != "workers" {
			g.Expect(h.Spec.ConsumerRef).To(BeNil(), "host %s does not match the selector", h.Name)
			continue
		}
		g.Expect(h.Spec.ConsumerRef).NotTo(BeNil(), "host %s is free while machines wait", h.Name)
		claimedBy[ns+"/"+h.Name] = h.Spec.ConsumerRef.Name
	}
	g.Expect(claimedBy).To(HaveLen(10))
	// The host each machine records is the host that records the machine: none twice.
	for machine, host := range byMachine {
		g.Expect(claimedBy).To(HaveKeyWithValue(host, machine))
	}
	machines := &infrav1.Metal3MachineList{}
	g.Expect(env.Client.List(ctx, machines, client.InNamespace(ns))).To(Succeed())
	for _, m := range machines.Items {
		if m.Annotations[infrav1.HostAnnotation] == "" {
			g.Expect(condition(&m, infrav1.AssociateBareMetalHostCondition).Message).To(
				ContainSubstring("none of the 10 hosts matching hostSelector pool=workers can be claimed"))
		}
	}
}

// Admission refuses bad selectors before any controller sees them, naming the operator.
func TestBadSelectorsRefusedAtAdmission(t *testing.T) {
	ns := newNamespace(t)
	tests := []struct {
		name  string
		given infrav1.HostSelectorRequirement
		want  string
	}{
		{"gt with a word", infrav1.HostSelectorRequirement{Key: "cpus", Operator: "gt", Values: []string{"many"}}, `operator "gt" needs exactly one integer value`},
		{"lt with two values", infrav1.HostSelectorRequirement{Key: "cpus", Operator: "lt", Values: []string{"1", "2"}}, `operator "lt" needs exactly one integer value`},
		{"in without values", infrav1.HostSelectorRequirement{Key: "key2", Operator: "in"}, `operator "in" needs at least one value`},
		{"exists with values", infrav1.HostSelectorRequirement{Key: "key2", Operator: "exists", Values: []string{"x"}}, `operator "exists" takes no values`},
		{"= with two values", infrav1.HostSelectorRequirement{Key: "key2", Operator: "=", Values: []string{"a", "b"}}, `operator "=" needs exactly one value`},
		{"unknown operator", infrav1.HostSelectorRequirement{Key: "key2", Operator: "like", Values: []string{"a"}}, `spec.hostSelector.matchExpressions[0].operator: Unsupported value: "like"`},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			m3m := &infrav1.Metal3Machine{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("bad-%d", i)},
				Spec: infrav1.Metal3MachineSpec{
					Image:        infrav1.Image{URL: "http://images.example.com/u.qcow2", Checksum: ptr.To("abc")},
					HostSelector: infrav1.HostSelector{MatchExpressions: []infrav1.HostSelectorRequirement{tt.given}},
				},
			}
			err := env.Client.Create(context.Background(), m3m)
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).To(ContainSubstring(tt.want))
		})
	}
}
