package ippool_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/ippool"
	"github.com/metalwire/metalwire/internal/manager/managertest"
)

// Under --watch-filter a claim relabelled for another manager is no longer this manager's: when
// its pool can hand out addresses again, the claim still labelled for this manager is served and
// the relabelled one is left as it was, although this manager saw it as one of the pool's claims
// before.
func TestClaimRelabelledForAnotherManagerIsLeftAlone(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	mgr := managertest.New(t, env, ns, nil)
	r := &ippool.Reconciler{StatusInterval: 100 * time.Millisecond, WatchFilter: "team-a"}
	g.Expect(r.SetupWithManager(ctx, mgr, 2)).To(Succeed())
	managertest.Run(t, mgr)

	teamA := map[string]string{clusterv1.WatchLabel: "team-a"}
	stays, leaves := newClaim(ns, "stays", "later", nil), newClaim(ns, "leaves", "later", nil)
	stays.Labels, leaves.Labels = map[string]string{clusterv1.WatchLabel: "team-a"}, map[string]string{clusterv1.WatchLabel: "team-a"}
	create(t, stays, leaves)
	claimReady(t, ns, "stays", ipamv1.PoolNotFoundReason)
	_, before := claimReady(t, ns, "leaves", ipamv1.PoolNotFoundReason)

	before.Labels[clusterv1.WatchLabel] = "team-b"
	g.Expect(env.Client.Update(ctx, before)).To(Succeed())
	// The manager's cache has the new label before its pool exists.
	g.Eventually(func(g Gomega) {
		seen := &ipamv1.IPClaim{}
		g.Expect(mgr.GetCache().Get(ctx, client.ObjectKeyFromObject(before), seen)).To(Succeed())
		g.Expect(seen.Labels).To(HaveKeyWithValue(clusterv1.WatchLabel, "team-b"))
	}).WithTimeout(10 * time.Second).Should(Succeed())

	create(t, newPool(ns, "later", func(p *ipamv1.IPPool) { p.Labels = teamA }))
	g.Expect(claimAddress(t, ns, "stays")).To(Equal("192.168.0.10"))
	g.Consistently(func(g Gomega) {
		c := &ipamv1.IPClaim{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(before), c)).To(Succeed())
		g.Expect(c.Status.Address).To(BeNil(), "the claim relabelled for team-b was served")
		g.Expect(meta.FindStatusCondition(c.Status.Conditions, ipamv1.ReadyCondition).Reason).To(Equal(ipamv1.PoolNotFoundReason))
	}).WithTimeout(2 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
	g.Expect(addressesOf(t, ns, "later")).To(Equal(map[string]string{"192.168.0.10": "stays"}))
}
