package v1alpha1_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
)

// Every field a user or controller sets comes back from the API server as written: nothing is
// pruned by a schema that forgot a field, and the only change is the documented default.
func TestIPPoolRoundTrip(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	pool := &ipamv1.IPPool{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "pool-", Namespace: namespace},
		Spec: ipamv1.IPPoolSpec{
			ClusterName: ptrTo("cluster-1"),
			NamePrefix:  "cluster-1-prov",
			Pools: []ipamv1.Pool{
				{Start: addr("192.168.0.10"), End: addr("192.168.0.250"), Subnet: subnet("192.168.0.0/24"),
					Prefix: 24, Gateway: addr("192.168.0.1"), DNSServers: []ipamv1.IPAddressStr{"192.168.0.53"}},
				{Subnet: subnet("2001:db8::/64"), Prefix: 64, Gateway: addr("2001:db8::1")},
			},
			PreAllocations:    map[string]ipamv1.IPAddressStr{"host-0-pool": "192.168.0.20", "host-1-pool": "2001:db8::20"},
			Prefix:            24,
			Gateway:           addr("192.168.0.1"),
			DNSServers:        []ipamv1.IPAddressStr{"8.8.8.8", "2001:4860:4860::8888"},
			ExcludedAddresses: []string{"192.168.0.7", "192.168.0.100-192.168.0.109", "2001:db8::/120"},
			ReuseGracePeriod:  &metav1.Duration{Duration: 90 * time.Second},
		},
	}
	want := pool.Spec.DeepCopy()
	want.AllocationStrategy = ipamv1.AllocationStrategySequential // the documented default

	g.Expect(env.Client.Create(ctx, pool)).To(Succeed())
	got := &ipamv1.IPPool{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pool), got)).To(Succeed())
	g.Expect(got.Spec).To(Equal(*want))

	// Status is written by the controller through the status subresource.
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	got.Status = ipamv1.IPPoolStatus{
		LastUpdated: &now,
		Allocations: map[string]ipamv1.IPAddressStr{"claim-1": "192.168.0.10", "claim-2": "2001:db8::2"},
		Total:       ptrTo[int64](241 + 1<<62),
		Used:        ptrTo[int64](2),
		Free:        ptrTo[int64](239 + 1<<62),
		OutOfRange:  ptrTo[int64](0),
		Conditions: []metav1.Condition{{Type: ipamv1.ReadyCondition, Status: metav1.ConditionTrue,
			Reason: ipamv1.PoolAvailableReason, Message: "addresses free", LastTransitionTime: now}},
	}
	wantStatus := got.Status.DeepCopy()
	g.Expect(env.Client.Status().Update(ctx, got)).To(Succeed())
	stored := &ipamv1.IPPool{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pool), stored)).To(Succeed())
	expectSameStatusTimes(g, stored.Status.LastUpdated, wantStatus.LastUpdated)
	stored.Status.LastUpdated, wantStatus.LastUpdated = nil, nil
	g.Expect(stored.Status.Conditions).To(HaveLen(1))
	expectSameStatusTimes(g, &stored.Status.Conditions[0].LastTransitionTime, &wantStatus.Conditions[0].LastTransitionTime)
	stored.Status.Conditions[0].LastTransitionTime, wantStatus.Conditions[0].LastTransitionTime = metav1.Time{}, metav1.Time{}
	g.Expect(stored.Status).To(Equal(*wantStatus))

	// Counters the controller has not computed yet stay absent rather than reading as zero.
	fresh := &ipamv1.IPPool{ObjectMeta: metav1.ObjectMeta{GenerateName: "pool-", Namespace: namespace},
		Spec: ipamv1.IPPoolSpec{NamePrefix: "fresh"}}
	g.Expect(env.Client.Create(ctx, fresh)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(fresh), fresh)).To(Succeed())
	g.Expect(fresh.Status.Total).To(BeNil())
	g.Expect(fresh.Status.Free).To(BeNil())
}

func TestIPClaimRoundTrip(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	claim := &ipamv1.IPClaim{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "claim-", Namespace: namespace,
			Annotations: map[string]string{ipamv1.IPAddressAnnotation: "192.168.0.42"},
			Labels:      map[string]string{ipamv1.ClusterNameLabel: "cluster-1", ipamv1.PoolNameLabel: "pool-1"}},
		Spec: ipamv1.IPClaimSpec{Pool: corev1.ObjectReference{Name: "pool-1", Namespace: namespace}},
	}
	g.Expect(env.Client.Create(ctx, claim)).To(Succeed())
	got := &ipamv1.IPClaim{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), got)).To(Succeed())
	g.Expect(got.Spec).To(Equal(claim.Spec))
	g.Expect(got.Annotations).To(HaveKeyWithValue("ipAddress", "192.168.0.42"))
	g.Expect(got.Labels).To(Equal(claim.Labels))

	got.Status = ipamv1.IPClaimStatus{
		Address:      &corev1.ObjectReference{Name: "prov-192-168-0-42", Namespace: namespace},
		ErrorMessage: ptrTo("previous attempt: Exhausted IP Pools"),
	}
	want := got.Status.DeepCopy()
	g.Expect(env.Client.Status().Update(ctx, got)).To(Succeed())
	stored := &ipamv1.IPClaim{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), stored)).To(Succeed())
	g.Expect(stored.Status).To(Equal(*want))
}

func TestIPAddressRoundTrip(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	address := &ipamv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{Name: ipamv1.IPAddressName("roundtrip", "2001:db8::42"), Namespace: namespace},
		Spec: ipamv1.IPAddressSpec{
			Address:    "2001:db8::42",
			Prefix:     64,
			Gateway:    addr("2001:db8::1"),
			DNSServers: []ipamv1.IPAddressStr{"2001:db8::53"},
			Pool:       corev1.ObjectReference{Name: "pool-1", Namespace: namespace, Kind: "IPPool"},
			Claim:      corev1.ObjectReference{Name: "claim-1", Namespace: namespace, Kind: "IPClaim"},
		},
	}
	g.Expect(env.Client.Create(ctx, address)).To(Succeed())
	got := &ipamv1.IPAddress{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(address), got)).To(Succeed())
	g.Expect(got.Name).To(Equal("roundtrip-2001-db8--42"))
	g.Expect(got.Spec).To(Equal(address.Spec))

	// The name is the lock: a second object for the same address is refused.
	twin := address.DeepCopy()
	twin.ResourceVersion = ""
	twin.Spec.Claim.Name = "claim-2"
	twin.Name = ipamv1.IPAddressName("roundtrip", "2001:DB8:0:0:0:0:0:42")
	g.Expect(env.Client.Create(ctx, twin)).To(MatchError(ContainSubstring("already exists")))
}

// expectSameStatusTimes compares timestamps by instant: the API server stores them to the
// second and decoding yields the local time zone.
func expectSameStatusTimes(g Gomega, got, want *metav1.Time) {
	g.ExpectWithOffset(1, got).NotTo(BeNil())
	g.ExpectWithOffset(1, got.Time).To(BeTemporally("==", want.Time))
}
