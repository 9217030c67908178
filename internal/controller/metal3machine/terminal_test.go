package metal3machine

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// TestInvalidSelectorIsTerminal: a hostSelector the API server accepts but that is no label
// selector (a key prefix longer than a DNS name: the CRD's rule bounds the whole key only) is
// reported on the machine, saying what to fix, and is not retried: controller-runtime counts a
// terminal error, and no reconcile of the machine fails again while nothing changes.
func TestInvalidSelectorIsTerminal(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	cluster := createCluster(t, ns, "c1", clusterOpts{})
	createHost(t, ns, "host-0", map[string]string{"rack": "r1"}, bmov1.StateAvailable)
	terminalBefore := reconcileCounter(g, "controller_runtime_terminal_reconcile_errors_total")

	badKey := strings.Repeat("a", 254) + "/rack"
	m3m := createMachine(t, cluster, "m-0", machineOpts{bootstrap: "m-0-bootstrap",
		selector: infrav1.HostSelector{MatchLabels: map[string]string{badKey: "r1"}}})

	g.Eventually(func(g Gomega) {
		c := condition(getM3M(g, m3m), infrav1.AssociateBareMetalHostCondition)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(InvalidHostSelectorReason))
		g.Expect(c.Message).To(And(ContainSubstring("spec.hostSelector.matchLabels"), ContainSubstring("fix the selector")))
		g.Expect(c.Message).NotTo(ContainSubstring("terminal error"), "the condition has the words a person acts on")
	}).WithTimeout(30 * time.Second).WithPolling(poll).Should(Succeed())
	g.Eventually(func() float64 { return reconcileCounter(g, "controller_runtime_terminal_reconcile_errors_total") }).
		WithTimeout(10*time.Second).Should(BeNumerically(">", terminalBefore), "the error is terminal")

	// A retried error would come back within milliseconds, then at doubling intervals.
	time.Sleep(time.Second) // the machine's own status write wakes it once more: terminal again
	errorsNow := reconcileCounter(g, "controller_runtime_reconcile_errors_total")
	g.Consistently(func() float64 { return reconcileCounter(g, "controller_runtime_reconcile_errors_total") }).
		WithTimeout(3*time.Second).WithPolling(poll).Should(Equal(errorsNow), "the machine is not retried")
	g.Expect(getHost(g, ns, "host-0").Spec.ConsumerRef).To(BeNil(), "no host is claimed")
}

// reconcileCounter is the sum of a controller-runtime counter for the Metal3Machine controller
// over the managers of this process.
func reconcileCounter(g Gomega, name string) float64 {
	families, err := ctrlmetrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	sum := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == metal3MachineControllerName {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}
