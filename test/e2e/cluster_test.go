package e2e

import (
	"context"
	"maps"
	"net/netip"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/simulator"
)

// TestClusterLifecycle is the life of examples/cluster, in order: each step starts from where
// the one before left the cluster, so the steps stop at the first failure.
func TestClusterLifecycle(t *testing.T) {
	needsDataTemplates(t)
	for _, step := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"every machine is provisioned on its own host with addresses from both pools", provision},
		{"scaling the workers down releases a host and its addresses", scaleDown},
		{"scaling back up re-uses the released host and the freed index", scaleUp},
		{"deleting the cluster gives every host and every address back", deleteCluster},
	} {
		if !t.Run(step.name, step.run) {
			return
		}
	}
}

// state carries what one step saw to the next.
var state struct {
	hosts    map[string]string // Metal3Machine -> host, when all 4 were provisioned
	data     []string          // Metal3Data names then
	released string            // the host scale-down freed
}

func provision(t *testing.T) {
	g := NewWithT(t)
	p := waitUntilDone(t)
	g.Expect(p.Machines).To(Equal(clusterHosts))

	state.hosts = machineHosts(g)
	g.Expect(state.hosts).To(HaveLen(clusterHosts))
	g.Expect(state.hosts).To(HaveKey(controlPlane))
	hosts := slices.Collect(maps.Values(state.hosts))
	g.Expect(slices.Compact(slices.Sorted(slices.Values(hosts)))).To(HaveLen(clusterHosts), "every machine has a host of its own")

	// One index per machine, 0 to 3, and two addresses each.
	state.data = metal3DataNames(g)
	g.Expect(state.data).To(Equal([]string{dataTemplate + "-0", dataTemplate + "-1", dataTemplate + "-2", dataTemplate + "-3"}))
	g.Expect(addressesIn(g, clusterPools...)).To(HaveLen(2 * clusterHosts))
	expectHostsAgreeWithSwitch(g)

	// Every host boots with the bond, the ClusterNetwork's two VLANs on it and one static address
	// of each family, and no two hosts share one; and its network data agrees with its switch
	// ports, as the controllers checked.
	seen := map[string]string{}
	for _, h := range hosts {
		g.Expect(host(g, h).Status.Provisioning.State).To(Equal(bmov1.StateProvisioned))
		nd := networkData(g, h, simulator.NetworkDataFile)
		g.Expect(nd).To(HaveKeyWithValue("link:bond0", "bond"))
		g.Expect(nd).To(HaveKeyWithValue("link:bond0.control", "vlan"))
		g.Expect(nd).To(HaveKeyWithValue("link:bond0.storage", "vlan"))
		v4, v6 := netip.MustParseAddr(nd["baremetal"]), netip.MustParseAddr(nd["storage"])
		g.Expect(netip.MustParsePrefix("192.168.111.0/24").Contains(v4)).To(BeTrue(), "host %s IPv4 %s", h, v4)
		g.Expect(netip.MustParsePrefix("fd00:100::/64").Contains(v6)).To(BeTrue(), "host %s IPv6 %s", h, v6)
		for _, a := range []string{v4.String(), v6.String()} {
			g.Expect(seen).NotTo(HaveKey(a), "address %s given to %s and %s", a, seen[a], h)
			seen[a] = h
		}
		g.Expect(hostFile(h, simulator.MetaDataFile)).To(BeAnExistingFile())
		g.Expect(hostFile(h, simulator.UserDataFile)).To(BeAnExistingFile())
	}
}

func scaleDown(t *testing.T) {
	g := NewWithT(t)
	scaleWorkers(t, 2)
	g.Eventually(func(g Gomega) {
		g.Expect(workerMachines(g)).To(HaveLen(2))
	}, wait, poll).Should(Succeed())
	waitUntilDone(t)

	now := machineHosts(g)
	g.Expect(now).To(HaveLen(clusterHosts - 1))
	for m, h := range state.hosts {
		if _, kept := now[m]; !kept {
			state.released = h
		}
	}
	g.Expect(state.released).NotTo(BeEmpty())

	// BMO (the simulator) deprovisioned the host and metalwire let go of it.
	g.Eventually(func(g Gomega) {
		h := host(g, state.released)
		g.Expect(h.Status.Provisioning.State).To(Equal(bmov1.StateAvailable))
		g.Expect(h.Spec.ConsumerRef).To(BeNil())
		g.Expect(h.Spec.Image).To(BeNil())
	}, wait, poll).Should(Succeed())
	g.Expect(hostFile(state.released, simulator.DeprovisionedMarker)).To(BeAnExistingFile())

	// Its Metal3Data is gone, leaving a gap in the indexes, and its two addresses are free.
	g.Eventually(func(g Gomega) {
		g.Expect(metal3DataNames(g)).To(HaveLen(clusterHosts - 1))
		g.Expect(addressesIn(g, clusterPools...)).To(HaveLen(2 * (clusterHosts - 1)))
	}, wait, poll).Should(Succeed())
}

func scaleUp(t *testing.T) {
	g := NewWithT(t)
	before := machineHosts(g)
	scaleWorkers(t, 3)
	g.Eventually(func(g Gomega) {
		g.Expect(workerMachines(g)).To(HaveLen(3))
	}, wait, poll).Should(Succeed())
	waitUntilDone(t)

	// The only free host of the cluster is the one scale-down released: the new machine has it.
	after := machineHosts(g)
	g.Expect(after).To(HaveLen(clusterHosts))
	var added string
	for m, h := range after {
		if _, old := before[m]; !old {
			added = h
		}
	}
	g.Expect(added).To(Equal(state.released))
	g.Expect(host(g, added).Status.Provisioning.State).To(Equal(bmov1.StateProvisioned))
	g.Expect(hostFile(added, simulator.DeprovisionedMarker)).NotTo(BeAnExistingFile(), "provisioning again clears the marker")

	// The freed index is given out again rather than a new one (demo-nodes-4).
	g.Expect(metal3DataNames(g)).To(Equal(state.data))
	g.Expect(addressesIn(g, clusterPools...)).To(HaveLen(2 * clusterHosts))
	expectHostsAgreeWithSwitch(g)
}

func deleteCluster(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	cluster := &clusterv1.Cluster{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterName}, cluster)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, cluster)).To(Succeed())

	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterName}, &clusterv1.Cluster{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "Cluster still there: %v", err)
	}, wait, poll).Should(Succeed())

	// Every host the cluster used is deprovisioned and free.
	for _, h := range slices.Collect(maps.Values(state.hosts)) {
		g.Eventually(func(g Gomega) {
			bmh := host(g, h)
			g.Expect(bmh.Status.Provisioning.State).To(Equal(bmov1.StateAvailable), h)
			g.Expect(bmh.Spec.ConsumerRef).To(BeNil(), h)
		}, wait, poll).Should(Succeed())
	}
	// Nothing of the cluster is left: no machines, data, claims or addresses in its pools.
	g.Eventually(func(g Gomega) {
		m3ms := &infrav1.Metal3MachineList{}
		g.Expect(env.Client.List(ctx, m3ms, client.InNamespace(ns))).To(Succeed())
		g.Expect(m3ms.Items).To(BeEmpty())
		g.Expect(metal3DataNames(g)).To(BeEmpty())
		g.Expect(addressesIn(g, clusterPools...)).To(BeEmpty())
		claims := &ipamv1.IPClaimList{}
		g.Expect(env.Client.List(ctx, claims, client.InNamespace(ns))).To(Succeed())
		for _, c := range claims.Items {
			g.Expect(clusterPools).NotTo(ContainElement(c.Spec.Pool.Name), "IPClaim %s left behind", c.Name)
		}
	}, wait, poll).Should(Succeed())
	// The pools say so too.
	for _, name := range clusterPools {
		g.Eventually(func(g Gomega) {
			pool := &ipamv1.IPPool{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pool)).To(Succeed())
			g.Expect(pool.Status.Allocations).To(BeEmpty(), name)
		}, wait, poll).Should(Succeed())
	}
}

// expectHostsAgreeWithSwitch: every Metal3Data's network data agrees with its host's switch
// ports (the controllers' HostSwitchMismatch condition is False), and every machine shows it.
func expectHostsAgreeWithSwitch(g Gomega) {
	g.Eventually(func(g Gomega) {
		for _, name := range metal3DataNames(g) {
			d := &infrav1.Metal3Data{}
			g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
			c := meta.FindStatusCondition(d.Status.Conditions, infrav1.DataHostSwitchMismatchCondition)
			g.Expect(c).NotTo(BeNil(), "Metal3Data %s has no %s condition", name, infrav1.DataHostSwitchMismatchCondition)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse), "Metal3Data %s: %s", name, c.Message)
		}
		for m3mName := range machineHosts(g) {
			m := &infrav1.Metal3Machine{}
			g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: m3mName}, m)).To(Succeed())
			c := meta.FindStatusCondition(m.Status.Conditions, infrav1.DataHostSwitchMismatchCondition)
			g.Expect(c).NotTo(BeNil(), "Metal3Machine %s has no %s condition", m3mName, infrav1.DataHostSwitchMismatchCondition)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse), "Metal3Machine %s: %s", m3mName, c.Message)
		}
	}, wait, poll).Should(Succeed())
}
