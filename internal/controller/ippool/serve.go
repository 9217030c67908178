package ippool

import (
	"context"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	capiipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
)

// maxAttempts bounds how many addresses one claim tries in a batch when others turn out to hold
// them (another manager got there first); the claim is retried in the next batch after that.
const maxAttempts = 8

// serve writes the allocation of one claim in two writes: create the IPAddress named after the
// address (the address-level lock: the API server refuses a second object of that name), then
// write the claim's status with the claim's resourceVersion as precondition (the claim-level
// lock: of two managers serving one claim, only one status write succeeds, and the other
// deletes the IPAddress it made). A Cluster API claim also gets its own IPAddress, named after
// the claim, and a finalizer first, as the IPAM contract asks.
func (b *batch) serve(ctx context.Context, j *job) error {
	if cc, ok := j.c.(capiClaim); ok && !hasFinalizer(j.c) {
		if done, err := b.addFinalizer(ctx, j, cc); done || err != nil {
			return err
		}
	}
	for range maxAttempts {
		name := b.addressName(j.addr)
		outcome, err := b.createAddress(ctx, j, name)
		switch {
		case err != nil:
			return err
		case outcome == addressTaken:
			if j.failReason != "" || !j.addr.IsValid() {
				return nil // reported
			}
			continue // j.addr is the next address
		case outcome == addressWait:
			b.conflicts.Add(1)
			return nil
		}
		if cc, ok := j.c.(capiClaim); ok {
			lost, err := b.createCAPIAddress(ctx, j, cc.IPAddressClaim)
			if err != nil || j.failReason != "" {
				if j.failReason != "" {
					return b.report(ctx, j)
				}
				return err
			}
			if lost {
				// Another manager decided this claim's address first: ours goes.
				return b.dropAddress(ctx, j, name)
			}
		}
		return b.reportAllocated(ctx, j, name)
	}
	b.conflicts.Add(1)
	return nil
}

// addFinalizer puts the claim's finalizer on a Cluster API claim, with the claim's
// resourceVersion as precondition. It returns done when the claim is to be looked at again.
func (b *batch) addFinalizer(ctx context.Context, j *job, cc capiClaim) (done bool, err error) {
	before := cc.DeepCopy()
	controllerutil.AddFinalizer(cc.IPAddressClaim, j.c.finalizer())
	err = b.r.Client.Patch(ctx, cc.IPAddressClaim, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}), fieldOwner)
	if err == nil {
		return false, nil
	}
	b.forgetFresh(j)
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) || apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
		// The cache was stale, or the claim is being deleted (which takes no new finalizer):
		// the claim is looked at again.
		b.conflicts.Add(1)
		return true, nil
	}
	return true, fmt.Errorf("adding the claim's finalizer: %w", err)
}

// addressOutcome is what creating a claim's IPAddress came to.
type addressOutcome int

const (
	addressHeld  addressOutcome = iota // the claim holds it: created now, or before
	addressTaken                       // another claim holds it; j has the next address or a failure
	addressWait                        // an earlier claim of the same name still holds it
)

// createAddress creates the IPAddress for j's address. When another claim holds that address,
// the index learns so and j gets the next address (or a failure).
func (b *batch) createAddress(ctx context.Context, j *job, name string) (addressOutcome, error) {
	entry, _ := b.st.index.Pool().Entry(j.addr)
	a := newIPAddress(b.pool, j.c, j.addr, entry)
	err := b.r.Client.Create(ctx, a, fieldOwner)
	if err == nil {
		return addressHeld, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		b.forgetFresh(j)
		j.failReason, j.failMessage = ipamv1.AllocationFailedReason, fmt.Sprintf("creating IPAddress %s: %v", name, err)
		return addressTaken, b.report(ctx, j)
	}
	existing := &ipamv1.IPAddress{}
	if err := b.r.APIReader.Get(ctx, client.ObjectKeyFromObject(a), existing); err != nil {
		b.forgetFresh(j)
		return addressTaken, fmt.Errorf("reading IPAddress %s that exists: %w", name, client.IgnoreNotFound(err))
	}
	switch b.relation(existing, j.c) {
	case ownClaim:
		return addressHeld, nil
	case formerClaim:
		// A deleted claim of the same name still holds it: once that IPAddress is released the
		// claim is served (with the same address, if the pool keeps it for the name).
		b.forgetFresh(j)
		b.st.suspect(existing.Name, "")
		return addressWait, nil
	case otherKind:
		b.forgetFresh(j)
		j.failReason, j.failMessage = ipamv1.AddressConflictReason, conflictMessage(j.addr, existing)
		return addressTaken, b.report(ctx, j)
	}
	owner := j.c.object().GetName()
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	b.st.forgetIfHeldLocked(owner, j.addr)
	if other, ok := allocationOf(existing); ok {
		_ = b.st.index.Observe(other.Owner, other.Addr)
	}
	if _, ok := requestedAddress(j.c); ok {
		j.addr = netip.Addr{}
		j.failReason = ipamv1.RequestedAddressUnavailableReason
		j.failMessage = fmt.Sprintf("annotation %s: %s is allocated to %q; ask for another address", ipamv1.IPAddressAnnotation, existing.Spec.Address, existing.Spec.Claim.Name)
		return addressTaken, b.reportUnlocked(ctx, j)
	}
	b.allocateLocked(j, b.r.now())
	if j.failReason != "" {
		return addressTaken, b.reportUnlocked(ctx, j)
	}
	return addressTaken, nil
}

// createCAPIAddress creates the Cluster API IPAddress named after the claim. Its name makes it
// the claim-level decision for a Cluster API claim: lost is true when it exists already for
// this claim with another address of the pool (another manager got there first).
func (b *batch) createCAPIAddress(ctx context.Context, j *job, c *capiipamv1.IPAddressClaim) (lost bool, err error) {
	entry, _ := b.st.index.Pool().Entry(j.addr)
	a := newCAPIAddress(b.pool, c, j.addr, entry)
	err = b.r.Client.Create(ctx, a, fieldOwner)
	if err == nil || !apierrors.IsAlreadyExists(err) {
		return false, err
	}
	existing := &capiipamv1.IPAddress{}
	if err := b.r.APIReader.Get(ctx, client.ObjectKeyFromObject(a), existing); err != nil {
		return false, fmt.Errorf("reading IPAddress %s: %w", a.Name, err)
	}
	if existing.Spec.Address == j.addr.String() && existing.Spec.ClaimRef.Name == c.Name {
		return false, nil
	}
	if existing.Spec.ClaimRef.Name == c.Name && isOurPool(existing.Spec.PoolRef) && existing.Spec.PoolRef.Name == b.pool.Name && ownedBy(existing.OwnerReferences, capiClaimKind, c.Name, c.UID) {
		return true, nil
	}
	j.failReason = ipamv1.AllocationFailedReason
	j.failMessage = fmt.Sprintf("an IPAddress named %s already exists for claim %q, address %s; delete it so the claim can be served",
		c.Name, existing.Spec.ClaimRef.Name, existing.Spec.Address)
	return false, nil
}

// reportAllocated writes the claim's status, with the claim's resourceVersion as precondition.
// If the claim changed meanwhile it is read again: if someone else decided its address first,
// the IPAddress made here is deleted; if the claim is gone, so is its IPAddress. Either way a
// claim never ends up with two addresses, and nothing leaks.
func (b *batch) reportAllocated(ctx context.Context, j *job, name string) error {
	for range maxAttempts {
		// An update, not a patch: it carries the resourceVersion the precondition needs, and
		// spares the API server from applying a patch (a third of the write's cost).
		rv := j.c.object().GetResourceVersion()
		j.c.setAllocated(name, b.r.now())
		err := b.r.Client.Status().Update(ctx, j.c.object(), fieldOwner)
		switch {
		case err == nil:
			b.st.written.Wrote(j.c.object().GetName(), rv, struct{}{})
			return nil
		case apierrors.IsNotFound(err):
			return b.dropAddress(ctx, j, name)
		case !apierrors.IsConflict(err):
			return err
		}
		fresh, err := b.readClaim(ctx, j.c)
		switch {
		case apierrors.IsNotFound(err):
			return b.dropAddress(ctx, j, name)
		case err != nil:
			return err
		case fresh.object().GetUID() != j.c.object().GetUID():
			// Deleted and made again under the same name: this IPAddress was the old one's.
			return b.dropAddress(ctx, j, name)
		}
		if decided, ok := fresh.decidedAddress(); ok {
			if decided == name || decided == "" {
				return nil // written by someone else, the same way
			}
			return b.dropAddress(ctx, j, name)
		}
		j.c = fresh
	}
	b.conflicts.Add(1)
	return nil
}

// readClaim reads a claim from the API server.
func (b *batch) readClaim(ctx context.Context, c claim) (claim, error) {
	fresh := c.deepCopy()
	if err := b.r.APIReader.Get(ctx, client.ObjectKeyFromObject(c.object()), fresh.object()); err != nil {
		return nil, fmt.Errorf("reading claim %s: %w", c.object().GetName(), err)
	}
	return fresh, nil
}

// dropAddress deletes an IPAddress this batch made for a claim that turned out not to take it
// (gone, or served by someone else), and forgets it in the index: no host ever used it.
func (b *batch) dropAddress(ctx context.Context, j *job, name string) error {
	a := &ipamv1.IPAddress{}
	if err := b.r.APIReader.Get(ctx, types.NamespacedName{Namespace: b.pool.Namespace, Name: name}, a); err != nil {
		return client.IgnoreNotFound(err)
	}
	if b.relation(a, j.c) != ownClaim {
		return nil
	}
	if err := b.deleteIPAddress(ctx, a); err != nil {
		return err
	}
	if addr, err := netip.ParseAddr(string(a.Spec.Address)); err == nil {
		b.st.forgetIfHeld(a.Spec.Claim.Name, addr)
	}
	if cc, ok := j.c.(capiClaim); ok {
		return b.deleteCAPIAddress(ctx, cc.IPAddressClaim, a.Spec.Address)
	}
	return nil
}

// report writes a claim's failure, if it says something new, with an event when the reason
// changes.
func (b *batch) report(ctx context.Context, j *job) error {
	now := b.r.now()
	j.c.setFailed(j.failReason, j.failMessage, now)
	if equality.Semantic.DeepEqual(statusOf(j.orig), statusOf(j.c)) {
		return nil
	}
	if j.orig.readyReason() != j.failReason {
		b.r.Recorder.Eventf(j.c.object(), nil, corev1.EventTypeWarning, j.failReason, "Allocate", j.failMessage)
	}
	err := b.r.Client.Status().Patch(ctx, j.c.object(), client.MergeFrom(j.orig.object()), fieldOwner)
	return client.IgnoreNotFound(err)
}

// reportUnlocked is report for a caller holding the pool lock: the write does not need it.
func (b *batch) reportUnlocked(ctx context.Context, j *job) error {
	b.st.mu.Unlock()
	defer b.st.mu.Lock()
	return b.report(ctx, j)
}

func statusOf(c claim) any {
	switch c := c.(type) {
	case ipClaim:
		return c.Status
	case capiClaim:
		return c.Status
	}
	return nil
}

// forgetFresh frees an address assigned in this batch whose write failed: no host used it, so it
// does not cool.
func (b *batch) forgetFresh(j *job) {
	if !j.fresh || !j.addr.IsValid() {
		return
	}
	b.st.forgetIfHeld(j.c.object().GetName(), j.addr)
	j.fresh = false
}

// claimRelation is how an IPAddress of the pool relates to a claim.
type claimRelation int

const (
	otherClaim  claimRelation = iota // given to another claim
	ownClaim                         // given to this claim
	formerClaim                      // given to an earlier claim of the same name and kind
	otherKind                        // given to a claim of the same name and the other kind
)

func (b *batch) relation(a *ipamv1.IPAddress, c claim) claimRelation {
	obj := c.object()
	if a.Spec.Pool.Name != b.pool.Name || a.Spec.Claim.Name != obj.GetName() {
		return otherClaim
	}
	if kindOrDefault(a.Spec.Claim.Kind) != c.kind() {
		return otherKind
	}
	if !ownedBy(a.OwnerReferences, c.kind(), obj.GetName(), obj.GetUID()) {
		return formerClaim
	}
	return ownClaim
}

// ownedBy reports whether refs name no owner of that kind and name (objects written by upstream's
// controller may lack one) or name it with that UID.
func ownedBy(refs []metav1.OwnerReference, kind, name string, uid types.UID) bool {
	owner := ownerUIDOf(refs, kind, name)
	return owner == "" || owner == uid
}

// kindOrDefault reads an IPAddress's claim kind: upstream leaves it empty for IPClaims.
func kindOrDefault(kind string) string {
	if kind == "" {
		return ipClaimKind
	}
	return kind
}

func conflictMessage(addr netip.Addr, existing *ipamv1.IPAddress) string {
	return fmt.Sprintf("%s is held by %s %q of the same name; an address never serves both an IPClaim and an IPAddressClaim: rename one of the claims",
		addr, kindOrDefault(existing.Spec.Claim.Kind), existing.Spec.Claim.Name)
}
