package ippool

import (
	"context"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	capiipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
)

// maxAttempts bounds how many addresses one claim tries in a batch when others turn out to hold
// them (another manager got there first); the claim is retried in the next batch after that.
const maxAttempts = 8

// serve writes the allocation of one claim: record the address on the claim (resourceVersion
// precondition: the claim-level lock), create the IPAddress (the address-level lock), for a
// Cluster API claim also its IPAddress, then report it in the claim's status.
func (b *batch) serve(ctx context.Context, j *job) error {
	if j.checkRecorded {
		if err := b.settleRecorded(ctx, j); err != nil || j.failReason != "" || !j.addr.IsValid() {
			if j.failReason != "" {
				return b.report(ctx, j)
			}
			return err
		}
	}
	for range maxAttempts {
		name := b.addressName(j.addr)
		if !j.fresh {
			// The index holds this address for the claim's name: make sure that is this claim,
			// not a claim of the other kind with the same name.
			existing := &ipamv1.IPAddress{}
			if err := b.r.Client.Get(ctx, types.NamespacedName{Namespace: b.pool.Namespace, Name: name}, existing); err == nil && !b.belongsTo(existing, j.c) {
				j.failReason = ipamv1.AddressConflictReason
				j.failMessage = fmt.Sprintf("%s is held by %s %q of the same name; an address never serves both an IPClaim and an IPAddressClaim: rename one of the claims",
					j.addr, kindOrDefault(existing.Spec.Claim.Kind), existing.Spec.Claim.Name)
				return b.report(ctx, j)
			}
		}
		if ok, err := b.lockClaim(ctx, j); !ok || err != nil {
			return err
		}
		created, err := b.createAddress(ctx, j, name)
		if err != nil {
			return err
		}
		if !created {
			if j.failReason != "" || !j.addr.IsValid() {
				return nil // reported
			}
			continue // another claim holds it; j.addr is the next address
		}
		if cc, ok := j.c.(capiClaim); ok {
			if err := b.createCAPIAddress(ctx, j, cc.IPAddressClaim); err != nil || j.failReason != "" {
				if j.failReason != "" {
					return b.report(ctx, j)
				}
				return err
			}
		}
		return b.reportAllocated(ctx, j, name)
	}
	b.conflicts.Add(1)
	return nil
}

// settleRecorded decides for a claim whose recorded address the index gives to someone else:
// if the API server says the claim holds it, the index learns so; otherwise the claim gets a new
// address.
func (b *batch) settleRecorded(ctx context.Context, j *job) error {
	rec, _ := recordedAddress(j.c)
	existing := &ipamv1.IPAddress{}
	err := b.r.APIReader.Get(ctx, types.NamespacedName{Namespace: b.pool.Namespace, Name: b.addressName(rec)}, existing)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	owner := j.c.object().GetName()
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	if err == nil && b.belongsTo(existing, j.c) {
		if other, held := b.st.index.Owner(rec); held && other != owner {
			b.st.index.Forget(rec)
		}
		if b.st.index.Observe(owner, rec) == nil {
			j.addr, j.fresh = rec, false
			return nil
		}
	}
	b.allocateLocked(j, b.r.now())
	return nil
}

// lockClaim records the address and the finalizer on the claim, with the claim's
// resourceVersion as precondition. It returns false when the claim changed or went away: the
// cache was stale or another manager got there first, and the claim is looked at again.
func (b *batch) lockClaim(ctx context.Context, j *job) (bool, error) {
	obj := j.c.object()
	if rec, ok := recordedAddress(j.c); ok && rec == j.addr && hasFinalizer(j.c) {
		return true, nil
	}
	before := obj.DeepCopyObject().(client.Object)
	controllerutil.AddFinalizer(obj, j.c.finalizer())
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[ipamv1.AllocatedAddressAnnotation] = j.addr.String()
	obj.SetAnnotations(annotations)
	err := b.r.Client.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}), fieldOwner)
	if err == nil {
		return true, nil
	}
	b.forgetFresh(j)
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) || apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
		// Invalid/Forbidden: a claim being deleted takes no new finalizer; its deletion is
		// handled when the cache shows it.
		b.conflicts.Add(1)
		return false, nil
	}
	return false, fmt.Errorf("recording address %s on the claim: %w", j.addr, err)
}

// createAddress creates the IPAddress. It returns true when the claim holds it (created now or
// before). When another claim holds it, the index learns so and j gets the next address (or a
// failure) and false is returned.
func (b *batch) createAddress(ctx context.Context, j *job, name string) (bool, error) {
	entry, _ := b.st.index.Pool().Entry(j.addr)
	a := newIPAddress(b.pool, j.c, j.addr, entry)
	err := b.r.Client.Create(ctx, a, fieldOwner)
	if err == nil {
		return true, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		b.forgetFresh(j)
		j.failReason, j.failMessage = ipamv1.AllocationFailedReason, fmt.Sprintf("creating IPAddress %s: %v", name, err)
		return false, b.report(ctx, j)
	}
	existing := &ipamv1.IPAddress{}
	if err := b.r.APIReader.Get(ctx, client.ObjectKeyFromObject(a), existing); err != nil {
		b.forgetFresh(j)
		return false, fmt.Errorf("reading IPAddress %s that exists: %w", name, client.IgnoreNotFound(err))
	}
	if b.belongsTo(existing, j.c) {
		return true, nil
	}
	owner := j.c.object().GetName()
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	if held, ok := b.st.index.Owner(j.addr); ok && held == owner {
		b.st.index.Forget(j.addr)
	}
	if other, ok := allocationOf(existing); ok {
		_ = b.st.index.Observe(other.Owner, other.Addr)
	}
	if _, ok := requestedAddress(j.c); ok {
		j.addr = netip.Addr{}
		j.failReason = ipamv1.RequestedAddressUnavailableReason
		j.failMessage = fmt.Sprintf("annotation %s: %s is allocated to %q; ask for another address", ipamv1.IPAddressAnnotation, existing.Spec.Address, existing.Spec.Claim.Name)
		return false, b.reportUnlocked(ctx, j)
	}
	b.allocateLocked(j, b.r.now())
	if j.failReason != "" {
		return false, b.reportUnlocked(ctx, j)
	}
	return false, nil
}

// createCAPIAddress creates the Cluster API IPAddress named after the claim.
func (b *batch) createCAPIAddress(ctx context.Context, j *job, c *capiipamv1.IPAddressClaim) error {
	entry, _ := b.st.index.Pool().Entry(j.addr)
	a := newCAPIAddress(b.pool, c, j.addr, entry)
	err := b.r.Client.Create(ctx, a, fieldOwner)
	if err == nil || !apierrors.IsAlreadyExists(err) {
		return err
	}
	existing := &capiipamv1.IPAddress{}
	if err := b.r.APIReader.Get(ctx, client.ObjectKeyFromObject(a), existing); err != nil {
		return err
	}
	if existing.Spec.ClaimRef.Name != c.Name || existing.Spec.Address != j.addr.String() {
		j.failReason = ipamv1.AllocationFailedReason
		j.failMessage = fmt.Sprintf("an IPAddress named %s already exists for claim %q, address %s; delete it so the claim can be served",
			c.Name, existing.Spec.ClaimRef.Name, existing.Spec.Address)
	}
	return nil
}

// reportAllocated writes the claim's status. If the claim is gone by now, what was created for
// it is deleted again: a claim deleted while it was being served leaks nothing.
func (b *batch) reportAllocated(ctx context.Context, j *job, name string) error {
	before := j.c.deepCopy()
	j.c.setAllocated(name, b.r.now())
	err := b.r.Client.Status().Patch(ctx, j.c.object(), client.MergeFrom(before.object()), fieldOwner)
	if apierrors.IsNotFound(err) {
		return b.release(ctx, j)
	}
	return err
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
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	if owner, ok := b.st.index.Owner(j.addr); ok && owner == j.c.object().GetName() {
		b.st.index.Forget(j.addr)
	}
	j.fresh = false
}

// belongsTo reports whether an IPAddress of this pool was given to this claim (name and kind).
func (b *batch) belongsTo(a *ipamv1.IPAddress, c claim) bool {
	return a.Spec.Pool.Name == b.pool.Name && a.Spec.Claim.Name == c.object().GetName() && kindOrDefault(a.Spec.Claim.Kind) == c.kind()
}

// kindOrDefault reads an IPAddress's claim kind: upstream leaves it empty for IPClaims.
func kindOrDefault(kind string) string {
	if kind == "" {
		return ipClaimKind
	}
	return kind
}
