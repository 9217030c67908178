package metal3machine

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

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
	writes := env.CountModified(t, ns, &infrav1.Metal3MachineList{})
	m3m := createMachine(t, cluster, "m-0", machineOpts{bootstrap: "m-0-bootstrap"})

	g := NewWithT(t)
	g.Eventually(func() string { return getM3M(g, m3m).Annotations[infrav1.HostAnnotation] }).
		WithTimeout(time.Minute).Should(Equal(ns + "/host-0"))
	want := map[string]int{"m-0": 3}
	g.Eventually(writes).WithTimeout(10*time.Second).Should(Equal(want), "the finalizer, the claim, the status: once each")
	g.Consistently(writes).WithTimeout(5*time.Second).WithPolling(100*time.Millisecond).
		Should(Equal(want), "nothing more is written while the host provisions")
}
