package ippool_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/ippool"
)

// TestWritePoolLeavesTheCachedPoolAlone: a reconcile's pool shares its allocations map with the
// cache's pool (copyPool), and writePool's status patch decodes the API server's answer into that
// pool. That is safe only because controller-runtime's client zeroes the target before decoding
// (apiutil's targetZeroingDecoder), so the answer goes into a new map: encoding/json alone would
// fill the map the pool holds, the cache's, which would change under every other reader (a data
// race on the map) and, here, where the cache lags the server by one allocation, list an
// allocation the cache never saw. This test fails if the client ever decodes in place.
func TestWritePoolLeavesTheCachedPoolAlone(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	stored := newPool(ns, "p", nil)
	g.Expect(env.Client.Create(ctx, stored)).To(Succeed())
	stored.Status.Allocations = map[string]ipamv1.IPAddressStr{"a": "192.168.0.10", "b": "192.168.0.11"}
	g.Expect(env.Client.Status().Update(ctx, stored)).To(Succeed())

	cached := &ipamv1.IPPool{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(stored), cached)).To(Succeed())
	cached.Status.Allocations = map[string]ipamv1.IPAddressStr{"a": "192.168.0.10"} // one behind the server

	pool := ippool.CopyPool(cached)
	meta.SetStatusCondition(&pool.Status.Conditions, metav1.Condition{Type: ipamv1.ReadyCondition,
		Status: metav1.ConditionTrue, Reason: ipamv1.PoolAvailableReason, Message: "written"})
	r := &ippool.Reconciler{Client: env.Client}
	g.Expect(r.WritePool(ctx, ippool.CopyPool(cached), pool)).To(Succeed())

	g.Expect(cached.Status.Allocations).To(Equal(map[string]ipamv1.IPAddressStr{"a": "192.168.0.10"}),
		"the cache's allocations map is as it was read")
	got := &ipamv1.IPPool{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(stored), got)).To(Succeed())
	g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, ipamv1.ReadyCondition)).To(BeTrue(), "the status was written")
	g.Expect(pool.ResourceVersion).To(Equal(got.ResourceVersion), "the reconcile's pool carries the stored resourceVersion")
}
