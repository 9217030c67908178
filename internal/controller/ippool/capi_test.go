package ippool_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
)

func newCAPIClaim(ns, name, pool string) *capiipamv1.IPAddressClaim {
	return &capiipamv1.IPAddressClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: capiipamv1.IPAddressClaimSpec{
			PoolRef: capiipamv1.IPPoolReference{APIGroup: "ipam.metal3.io", Kind: "IPPool", Name: pool},
		},
	}
}

func capiReady(t *testing.T, ns, name string) (*metav1.Condition, *capiipamv1.IPAddressClaim) {
	t.Helper()
	c := &capiipamv1.IPAddressClaim{}
	var cond *metav1.Condition
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, c)).To(Succeed())
		cond = meta.FindStatusCondition(c.Status.Conditions, capiipamv1.IPAddressClaimReadyCondition)
		g.Expect(cond).NotTo(BeNil())
	}).WithTimeout(20 * time.Second).Should(Succeed())
	return cond, c
}

// A Cluster API IPAddressClaim on an IPPool gets a Cluster API IPAddress named after it, owned
// as the contract says, and Ready with a reason; deleting the claim releases everything.
func TestCAPIClaimFlow(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns)
	create(t, newPool(ns, "pool", nil), newCAPIClaim(ns, "m1-eth0", "pool"))

	var claim *capiipamv1.IPAddressClaim
	g.Eventually(func(g Gomega) {
		var cond *metav1.Condition
		cond, claim = capiReady(t, ns, "m1-eth0")
		g.Expect(cond.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(cond.Reason).NotTo(BeEmpty())
		g.Expect(claim.Status.AddressRef.Name).To(Equal("m1-eth0"))
	}).WithTimeout(20 * time.Second).Should(Succeed())
	g.Expect(claim.Finalizers).To(ContainElement(ipamv1.CAPIIPAddressClaimFinalizer))

	a := &capiipamv1.IPAddress{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "m1-eth0"}, a)).To(Succeed())
	g.Expect(a.Spec.Address).To(Equal("192.168.0.10"))
	g.Expect(a.Spec.Prefix).To(Equal(ptr.To(int32(24))))
	g.Expect(a.Spec.Gateway).To(Equal("192.168.0.1"))
	g.Expect(a.Spec.ClaimRef.Name).To(Equal("m1-eth0"))
	g.Expect(a.Spec.PoolRef).To(Equal(capiipamv1.IPPoolReference{APIGroup: "ipam.metal3.io", Kind: "IPPool", Name: "pool"}))
	g.Expect(a.OwnerReferences).To(ContainElement(And(
		HaveField("Kind", "IPAddressClaim"), HaveField("Name", "m1-eth0"), HaveField("UID", claim.UID),
		HaveField("Controller", ptr.To(true)), HaveField("BlockOwnerDeletion", ptr.To(true)))))
	g.Expect(a.OwnerReferences).To(ContainElement(And(HaveField("Kind", "IPPool"), HaveField("Name", "pool"))))
	// The ipam.metal3.io IPAddress is the lock: it names the claim and its kind.
	g.Expect(addressesOf(t, ns, "pool")).To(Equal(map[string]string{"192.168.0.10": "m1-eth0"}))

	g.Expect(env.Client.Delete(context.Background(), claim)).To(Succeed())
	gone(t, claim)
	gone(t, a)
	g.Expect(addressesOf(t, ns, "pool")).To(BeEmpty())
}

// An address never serves both an IPClaim and a Cluster API IPAddressClaim: a claim of either
// kind asking for an address the other kind holds is refused.
func TestOneAddressNeverServesBothKinds(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns)
	create(t, newPool(ns, "pool", nil), newClaim(ns, "host-a", "pool", nil))
	g.Expect(claimAddress(t, ns, "host-a")).To(Equal("192.168.0.10"))

	// Same name, other kind: the name is the pool's key, so this is refused, not shared.
	create(t, newCAPIClaim(ns, "host-a", "pool"))
	cond, _ := capiReady(t, ns, "host-a")
	g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(cond.Reason).To(Equal(ipamv1.AddressConflictReason))
	g.Expect(cond.Message).To(ContainSubstring(`held by IPClaim "host-a"`))

	// A Cluster API claim gets another address; an IPClaim asking for that one is refused.
	create(t, newCAPIClaim(ns, "host-b", "pool"))
	g.Eventually(func(g Gomega) {
		a := &capiipamv1.IPAddress{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "host-b"}, a)).To(Succeed())
		g.Expect(a.Spec.Address).To(Equal("192.168.0.11"))
	}).WithTimeout(20 * time.Second).Should(Succeed())
	create(t, newClaim(ns, "thief", "pool", map[string]string{ipamv1.IPAddressAnnotation: "192.168.0.11"}))
	cond, _ = claimReady(t, ns, "thief", ipamv1.RequestedAddressUnavailableReason)
	g.Expect(cond.Message).To(ContainSubstring(`allocated to "host-b"`))
	g.Expect(addressesOf(t, ns, "pool")).To(Equal(map[string]string{"192.168.0.10": "host-a", "192.168.0.11": "host-b"}))
}

// A claim of a paused Cluster is left alone until the Cluster is unpaused.
func TestCAPIClaimOfPausedCluster(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns)
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "c1", Namespace: ns},
		Spec:       clusterv1.ClusterSpec{Paused: ptr.To(true)},
	}
	create(t, cluster, newPool(ns, "pool", nil))
	claim := newCAPIClaim(ns, "paused", "pool")
	claim.Spec.ClusterName = "c1"
	create(t, claim)
	g.Consistently(func() []metav1.Condition {
		c := &capiipamv1.IPAddressClaim{}
		_ = env.Client.Get(context.Background(), client.ObjectKeyFromObject(claim), c)
		return c.Status.Conditions
	}).WithTimeout(2 * time.Second).Should(BeEmpty())

	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
	cluster.Spec.Paused = ptr.To(false)
	g.Expect(env.Client.Update(context.Background(), cluster)).To(Succeed())
	cond, _ := capiReady(t, ns, "paused")
	g.Expect(cond.Status).To(Equal(metav1.ConditionTrue))
}
