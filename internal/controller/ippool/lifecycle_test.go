package ippool_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
)

func getPool(t *testing.T, ns, name string) *ipamv1.IPPool {
	t.Helper()
	p := &ipamv1.IPPool{}
	NewWithT(t).Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, p)).To(Succeed())
	return p
}

func deleteClaim(t *testing.T, ns, name string) {
	t.Helper()
	c := &ipamv1.IPClaim{}
	c.Namespace, c.Name = ns, name
	NewWithT(t).Expect(env.Client.Delete(context.Background(), c)).To(Succeed())
}

func gone(t *testing.T, obj client.Object) {
	t.Helper()
	NewWithT(t).Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj))
	}).WithTimeout(20*time.Second).Should(BeTrue(), "%s still exists", obj.GetName())
}

// An exhausted pool fails the claim with a clear message, and the claim is served, without a
// restart, as soon as the pool grows or another claim releases its address.
func TestExhaustionIsRetriedWhenThePoolHasRoom(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns)
	create(t, newPool(ns, "small", func(p *ipamv1.IPPool) {
		p.Spec.Pools = []ipamv1.Pool{{Start: addr("192.168.0.10"), End: addr("192.168.0.11")}}
	}))
	create(t, newClaim(ns, "a", "small", nil), newClaim(ns, "b", "small", nil))
	claimAddress(t, ns, "a")
	claimAddress(t, ns, "b")

	create(t, newClaim(ns, "c", "small", nil))
	cond, c := claimReady(t, ns, "c", ipamv1.PoolExhaustedReason)
	g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(cond.Message).To(Equal("pool has 2 addresses, all in use: add a range to spec.pools or release addresses"))
	g.Expect(*c.Status.ErrorMessage).To(HavePrefix("Exhausted IP Pools"))
	poolReady(t, ns, "small", ipamv1.PoolFullReason)

	// Growing the pool serves the waiting claim.
	p := getPool(t, ns, "small")
	p.Spec.Pools[0].End = addr("192.168.0.12")
	g.Expect(env.Client.Update(context.Background(), p)).To(Succeed())
	g.Expect(claimAddress(t, ns, "c")).To(Equal("192.168.0.12"))
	_, c = claimReady(t, ns, "c", ipamv1.AllocatedReason)
	g.Expect(c.Status.ErrorMessage).To(BeNil())

	// Full again; releasing a claim serves the next one with the released address.
	create(t, newClaim(ns, "d", "small", nil))
	claimReady(t, ns, "d", ipamv1.PoolExhaustedReason)
	deleteClaim(t, ns, "a")
	g.Expect(claimAddress(t, ns, "d")).To(Equal("192.168.0.10"))
}

// Deleting a claim deletes its IPAddress and lets the claim go; with a reuse grace period the
// address is not handed to another claim until the period has passed, even across a restart
// of the controller.
func TestReleaseAndReuseGracePeriod(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	m := startManager(t, ns)
	create(t, newPool(ns, "cool", func(p *ipamv1.IPPool) {
		p.Spec.Pools = []ipamv1.Pool{{Start: addr("192.168.0.10"), End: addr("192.168.0.11")}}
		p.Spec.ReuseGracePeriod = &metav1.Duration{Duration: 6 * time.Second}
	}))
	create(t, newClaim(ns, "a", "cool", nil))
	g.Expect(claimAddress(t, ns, "a")).To(Equal("192.168.0.10"))
	claim := &ipamv1.IPClaim{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "a"}, claim)).To(Succeed())
	// No finalizer to write: the IPAddress is owned by the claim and released on its deletion.
	g.Expect(claim.Finalizers).To(BeEmpty())
	a := &ipamv1.IPAddress{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "cool-192-168-0-10"}, a)).To(Succeed())
	g.Expect(a.OwnerReferences).To(ContainElement(And(
		HaveField("Kind", "IPClaim"), HaveField("UID", claim.UID), HaveField("Controller", HaveValue(BeTrue())))))

	released := time.Now()
	deleteClaim(t, ns, "a")
	gone(t, claim)
	g.Eventually(func() map[string]string { return addressesOf(t, ns, "cool") }).Should(BeEmpty())

	// The released address is durable: a new manager still lets it cool.
	g.Eventually(func() string {
		return getPool(t, ns, "cool").Annotations[ipamv1.ReleasesAnnotation]
	}).Should(ContainSubstring("192.168.0.10"))
	m.stop()
	startManager(t, ns)

	create(t, newClaim(ns, "b", "cool", nil))
	g.Expect(claimAddress(t, ns, "b")).To(Equal("192.168.0.11"))
	create(t, newClaim(ns, "c", "cool", nil))
	cond, _ := claimReady(t, ns, "c", ipamv1.PoolExhaustedReason)
	g.Expect(cond.Message).To(ContainSubstring("1 released addresses become free again"))
	// Served once the period is over, without any other event.
	g.Expect(claimAddress(t, ns, "c")).To(Equal("192.168.0.10"))
	g.Expect(time.Since(released)).To(BeNumerically(">=", 6*time.Second))
}

// A pool with live addresses is kept, and says which claims hold them; it goes once they are
// released.
func TestPoolDeletionWaitsForItsAddresses(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns)
	create(t, newPool(ns, "keep", nil), newClaim(ns, "holder", "keep", nil))
	claimAddress(t, ns, "holder")

	p := getPool(t, ns, "keep")
	g.Expect(p.Finalizers).To(ContainElement(ipamv1.IPPoolFinalizer))
	g.Expect(env.Client.Delete(context.Background(), p)).To(Succeed())
	p = poolReady(t, ns, "keep", ipamv1.AddressesInUseReason)
	cond := meta.FindStatusCondition(p.Status.Conditions, ipamv1.ReadyCondition)
	g.Expect(cond.Message).To(HavePrefix("1 addresses are still handed out, to claims holder;"))
	g.Consistently(func() error {
		return env.Client.Get(context.Background(), client.ObjectKeyFromObject(p), &ipamv1.IPPool{})
	}).WithTimeout(time.Second).Should(Succeed())

	deleteClaim(t, ns, "holder")
	gone(t, p)
}

// Two pools with one namePrefix would name their IPAddresses alike: the younger one is refused
// and hands out nothing; the older one keeps working.
func TestNamePrefixClashIsRefused(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns)
	create(t, newPool(ns, "first", func(p *ipamv1.IPPool) { p.Spec.NamePrefix = "shared" }))
	poolReady(t, ns, "first", ipamv1.PoolAvailableReason)
	time.Sleep(1100 * time.Millisecond) // creation timestamps have a resolution of one second
	create(t, newPool(ns, "second", func(p *ipamv1.IPPool) { p.Spec.NamePrefix = "shared" }))

	p := poolReady(t, ns, "second", ipamv1.DuplicateNamePrefixReason)
	cond := meta.FindStatusCondition(p.Status.Conditions, ipamv1.ReadyCondition)
	g.Expect(cond.Message).To(ContainSubstring(`namePrefix "shared" is already used by IPPool "first"`))

	create(t, newClaim(ns, "on-second", "second", nil), newClaim(ns, "on-first", "first", nil))
	cond, _ = claimReady(t, ns, "on-second", ipamv1.PoolNotReadyReason)
	g.Expect(cond.Message).To(ContainSubstring("already used by IPPool"))
	g.Expect(claimAddress(t, ns, "on-first")).To(Equal("192.168.0.10"))
	g.Expect(addressesOf(t, ns, "second")).To(BeEmpty())

	// When the first pool goes, the second one takes over the prefix.
	deleteClaim(t, ns, "on-first")
	g.Expect(env.Client.Delete(context.Background(), getPool(t, ns, "first"))).To(Succeed())
	g.Expect(claimAddress(t, ns, "on-second")).To(Equal("192.168.0.10"))
}

// A claim of a pool that does not exist says so, and is served once the pool is created.
func TestClaimOfMissingPool(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns)
	create(t, newClaim(ns, "early", "later", nil))
	cond, _ := claimReady(t, ns, "early", ipamv1.PoolNotFoundReason)
	g.Expect(cond.Message).To(ContainSubstring(`no IPPool "later" in namespace`))
	create(t, newPool(ns, "later", nil))
	g.Expect(claimAddress(t, ns, "early")).To(Equal("192.168.0.10"))
}

// A pool spec the allocator cannot use is reported on the pool with the field to fix.
func TestInvalidSpecIsReported(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns)
	create(t, newPool(ns, "bad", func(p *ipamv1.IPPool) {
		p.Spec.PreAllocations = map[string]ipamv1.IPAddressStr{"x": "10.9.9.9"}
	}))
	p := poolReady(t, ns, "bad", ipamv1.InvalidSpecReason)
	cond := meta.FindStatusCondition(p.Status.Conditions, ipamv1.ReadyCondition)
	g.Expect(cond.Message).To(HavePrefix("spec.preAllocations[x]: 10.9.9.9 is outside every range of spec.pools"))
}

// A restarted controller rebuilds its index from the IPAddresses that exist: it hands out the
// next free address, not one already held.
func TestRestartRebuildsTheIndex(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	m := startManager(t, ns)
	create(t, newPool(ns, "pool", nil))
	for _, name := range []string{"a", "b", "c"} {
		create(t, newClaim(ns, name, "pool", nil))
		claimAddress(t, ns, name)
	}
	m.stop()
	startManager(t, ns)
	create(t, newClaim(ns, "d", "pool", nil))
	g.Expect(claimAddress(t, ns, "d")).To(Equal("192.168.0.13"))
}

// Claims keyed by BareMetalHost name (seed 001): a host whose claim is deleted and made again
// (re-provisioning) gets its address back, while others do not get it in the meantime.
func TestSameClaimNameGetsItsAddressBack(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns)
	create(t, newPool(ns, "prov", func(p *ipamv1.IPPool) {
		p.Spec.ReuseGracePeriod = &metav1.Duration{Duration: time.Hour}
	}))
	create(t, newClaim(ns, "host-0-prov", "prov", nil))
	g.Expect(claimAddress(t, ns, "host-0-prov")).To(Equal("192.168.0.10"))
	claim := &ipamv1.IPClaim{}
	claim.Namespace, claim.Name = ns, "host-0-prov"
	deleteClaim(t, ns, "host-0-prov")
	gone(t, claim)

	create(t, newClaim(ns, "host-1-prov", "prov", nil))
	g.Expect(claimAddress(t, ns, "host-1-prov")).To(Equal("192.168.0.11"))
	create(t, newClaim(ns, "host-0-prov", "prov", nil))
	g.Expect(claimAddress(t, ns, "host-0-prov")).To(Equal("192.168.0.10"))
}

// A claim deleted while no manager runs leaves an IPAddress behind (the API server has no
// garbage collector here): the next manager releases it when it builds the pool's index. A claim
// deleted and made again under the same name gets an address of its own, not its predecessor's
// IPAddress.
func TestClaimsDeletedWhileNoManagerRunsAreReleased(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	m := startManager(t, ns)
	create(t, newPool(ns, "pool", nil))
	create(t, newClaim(ns, "gone", "pool", nil))
	g.Expect(claimAddress(t, ns, "gone")).To(Equal("192.168.0.10"))
	create(t, newClaim(ns, "again", "pool", nil))
	g.Expect(claimAddress(t, ns, "again")).To(Equal("192.168.0.11"))
	m.stop()

	deleteClaim(t, ns, "gone")
	deleteClaim(t, ns, "again")
	again := newClaim(ns, "again", "pool", nil)
	create(t, again)
	g.Expect(addressesOf(t, ns, "pool")).To(HaveLen(2), "nothing releases them while no manager runs")

	startManager(t, ns)
	g.Eventually(func() map[string]string { return addressesOf(t, ns, "pool") }).WithTimeout(20*time.Second).
		Should(Equal(map[string]string{"192.168.0.10": "again"}), "both released; the new claim gets the lowest free address")
	g.Expect(claimAddress(t, ns, "again")).To(Equal("192.168.0.10"))
	a := &ipamv1.IPAddress{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "pool-192-168-0-10"}, a)).To(Succeed())
	g.Expect(a.OwnerReferences).To(ContainElement(HaveField("UID", again.UID)), "owned by the new claim, not the deleted one")
}

// An IPAddress naming a claim that holds another address (left by a manager that lost the race
// for the claim and stopped before cleaning up) is deleted; the claim keeps its address.
func TestStrayIPAddressIsDeleted(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns)
	create(t, newPool(ns, "pool", nil))
	claim := newClaim(ns, "a", "pool", nil)
	create(t, claim)
	g.Expect(claimAddress(t, ns, "a")).To(Equal("192.168.0.10"))

	stray := &ipamv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{Name: "pool-192-168-0-15", Namespace: ns, OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "ipam.metal3.io/v1alpha1", Kind: "IPClaim", Name: "a", UID: claim.UID},
		}},
		Spec: ipamv1.IPAddressSpec{
			Claim:   corev1.ObjectReference{Name: "a", Namespace: ns},
			Pool:    corev1.ObjectReference{Name: "pool", Namespace: ns},
			Address: "192.168.0.15", Prefix: 24,
		},
	}
	create(t, stray)
	gone(t, stray)
	g.Expect(claimAddress(t, ns, "a")).To(Equal("192.168.0.10"))
	g.Expect(addressesOf(t, ns, "pool")).To(Equal(map[string]string{"192.168.0.10": "a"}))
}

// Claims made under metal3's ip-address-manager carry its finalizer: metalwire releases their
// address and removes it, so they go when deleted.
func TestUpstreamClaimFinalizerIsRemovedOnRelease(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns)
	create(t, newPool(ns, "pool", nil))
	claim := newClaim(ns, "old", "pool", nil)
	claim.Finalizers = []string{ipamv1.IPClaimFinalizer}
	create(t, claim)
	g.Expect(claimAddress(t, ns, "old")).To(Equal("192.168.0.10"))

	deleteClaim(t, ns, "old")
	gone(t, claim)
	g.Expect(addressesOf(t, ns, "pool")).To(BeEmpty(), "released before the claim went")
}
