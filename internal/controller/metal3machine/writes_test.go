package metal3machine

import (
	"context"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// TestClaimWritesTheMachineThreeTimes: a machine that finds a free host is written three times
// after its creation, each a write a user or the contract needs: its finalizer (before the
// claim), its host annotation and providerID, and its status. Nothing is written after that
// while its host provisions.
func TestClaimWritesTheMachineThreeTimes(t *testing.T) {
	ns := newNamespace(t)
	cluster := createCluster(t, ns, "writes", clusterOpts{})
	createHost(t, ns, "host-0", map[string]string{"rack": "r1"}, bmov1.StateAvailable)
	writes := countModified(t, ns)
	m3m := createMachine(t, cluster, "m-0", machineOpts{bootstrap: "m-0-bootstrap"})

	g := NewWithT(t)
	g.Eventually(func() string { return getM3M(g, m3m).Annotations[infrav1.HostAnnotation] }).
		WithTimeout(time.Minute).Should(Equal(ns + "/host-0"))
	want := map[string]int{"m-0": 3}
	g.Eventually(writes).WithTimeout(10*time.Second).Should(Equal(want), "the finalizer, the claim, the status: once each")
	g.Consistently(writes).WithTimeout(5*time.Second).WithPolling(100*time.Millisecond).
		Should(Equal(want), "nothing more is written while the host provisions")
}

// countModified watches the Metal3Machines of ns and returns a function giving, per machine,
// how many times it was modified after its creation.
func countModified(t *testing.T, ns string) func() map[string]int {
	t.Helper()
	g := NewWithT(t)
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := wc.Watch(ctx, &infrav1.Metal3MachineList{}, client.InNamespace(ns))
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(w.Stop)
	var mu sync.Mutex
	counts := map[string]int{}
	go func() {
		for ev := range w.ResultChan() {
			o, ok := ev.Object.(client.Object)
			if ok && ev.Type == watch.Modified {
				mu.Lock()
				counts[o.GetName()]++
				mu.Unlock()
			}
		}
	}()
	return func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := make(map[string]int, len(counts))
		for k, v := range counts {
			out[k] = v
		}
		return out
	}
}
