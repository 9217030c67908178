package ippool

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	capiipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
)

// suspectRecheck is how soon a suspect whose claim is still being served is looked at again.
const suspectRecheck = time.Second

// release deletes what a claim being deleted held, then lets the claim go if it waits for us
// (a Cluster API claim, or an IPClaim with upstream's finalizer). Every IPAddress the claim may
// hold is found: the index, the claim's status, the cache.
func (b *batch) release(ctx context.Context, j *job) error {
	owner := j.c.object().GetName()
	names := map[string]bool{}
	if b.st != nil {
		b.st.mu.Lock()
		if addr, ok := b.st.index.Lookup(owner); ok {
			names[b.addressName(addr)] = true
		}
		b.st.mu.Unlock()
	}
	if name, ok := j.c.decidedAddress(); ok && name != "" {
		names[name] = true
	}
	cached := &ipamv1.IPAddressList{}
	if err := b.r.Client.List(ctx, cached, client.InNamespace(b.pool.Namespace),
		client.MatchingFields{addressClaimField: claimKey(b.pool.Name, owner)}); err != nil {
		return err
	}
	for i := range cached.Items {
		names[cached.Items[i].Name] = true
	}
	for name := range names {
		if err := b.releaseAddressOf(ctx, j.c, name); err != nil {
			return err
		}
	}
	if cc, ok := j.c.(capiClaim); ok {
		if err := b.deleteCAPIAddress(ctx, cc.IPAddressClaim, ""); err != nil {
			return err
		}
	}
	obj := j.c.object()
	if !controllerutil.ContainsFinalizer(obj, j.c.finalizer()) {
		return nil
	}
	// The resourceVersion precondition matters with two managers: if the other one wrote the
	// claim's status since we looked (it created an IPAddress we did not see), the claim must
	// not go yet; it is looked at again and that IPAddress deleted too.
	before := obj.DeepCopyObject().(client.Object)
	controllerutil.RemoveFinalizer(obj, j.c.finalizer())
	err := b.r.Client.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}), fieldOwner)
	switch {
	case err == nil, apierrors.IsNotFound(err):
		return nil
	case apierrors.IsConflict(err):
		b.conflicts.Add(1)
		return nil
	}
	return fmt.Errorf("removing the claim's finalizer: %w", err)
}

// releaseAddressOf deletes one IPAddress if it belongs to the claim, and releases it in the
// index: with a grace period, the address cools.
func (b *batch) releaseAddressOf(ctx context.Context, c claim, name string) error {
	key := types.NamespacedName{Namespace: b.pool.Namespace, Name: name}
	a := &ipamv1.IPAddress{}
	if err := b.r.Client.Get(ctx, key, a); apierrors.IsNotFound(err) {
		// Not in the cache: perhaps created a moment ago. Ask the API server.
		err = b.r.APIReader.Get(ctx, key, a)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	if b.relation(a, c) != ownClaim {
		return nil
	}
	return b.releaseIPAddress(ctx, a, true)
}

// releaseIPAddress deletes an IPAddress and frees its address in the index. used says whether a
// host may have used it: then a grace period applies; an address no one was told of is free at
// once.
func (b *batch) releaseIPAddress(ctx context.Context, a *ipamv1.IPAddress, used bool) error {
	if err := b.deleteIPAddress(ctx, a); err != nil {
		return err
	}
	// An unparsable address was never in the index.
	if addr, err := netip.ParseAddr(string(a.Spec.Address)); err == nil && b.st != nil {
		if used {
			b.st.releaseIfHeld(a.Spec.Claim.Name, addr, b.r.now())
		} else {
			b.st.forgetIfHeld(a.Spec.Claim.Name, addr)
		}
	}
	return nil
}

// deleteIPAddress deletes one IPAddress, this very object (UID precondition), after taking off
// the finalizer upstream's controller puts on them.
func (b *batch) deleteIPAddress(ctx context.Context, a *ipamv1.IPAddress) error {
	if err := b.deleteWithFinalizer(ctx, a, ipamv1.IPAddressFinalizer); err != nil {
		return fmt.Errorf("deleting IPAddress %s: %w", a.Name, err)
	}
	return nil
}

// deleteWithFinalizer deletes this very object (UID precondition), after taking off finalizer if
// it carries it. An object already gone, or replaced, is not an error.
func (b *batch) deleteWithFinalizer(ctx context.Context, obj client.Object, finalizer string) error {
	if controllerutil.ContainsFinalizer(obj, finalizer) {
		before := obj.DeepCopyObject().(client.Object)
		controllerutil.RemoveFinalizer(obj, finalizer)
		if err := b.r.Client.Patch(ctx, obj, client.MergeFrom(before), fieldOwner); err != nil {
			return client.IgnoreNotFound(err)
		}
	}
	uid := obj.GetUID()
	if err := b.r.Client.Delete(ctx, obj, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return err // the caller says which object
	}
	return nil
}

// deleteCAPIAddress deletes the Cluster API IPAddress of a claim, if it is the one we made (and,
// when onlyAddress is set, if it holds that address).
func (b *batch) deleteCAPIAddress(ctx context.Context, c *capiipamv1.IPAddressClaim, onlyAddress ipamv1.IPAddressStr) error {
	a := &capiipamv1.IPAddress{}
	if err := b.r.APIReader.Get(ctx, client.ObjectKeyFromObject(c), a); err != nil {
		return client.IgnoreNotFound(err)
	}
	if a.Spec.ClaimRef.Name != c.Name || !isOurPool(a.Spec.PoolRef) || (onlyAddress != "" && a.Spec.Address != string(onlyAddress)) {
		return nil
	}
	if err := b.deleteWithFinalizer(ctx, a, ipamv1.CAPIIPAddressFinalizer); err != nil {
		return fmt.Errorf("deleting Cluster API IPAddress %s: %w", a.Name, err)
	}
	return nil
}

// check decides about a suspect IPAddress, asking the API server: it goes if its claim is gone
// (or was deleted and made again), or if its claim holds another address; it is recorded in
// the index if its claim holds it. While its claim is still being served it is looked at again
// shortly.
func (b *batch) check(ctx context.Context, j *job) error {
	a := &ipamv1.IPAddress{}
	if err := b.r.APIReader.Get(ctx, types.NamespacedName{Namespace: b.pool.Namespace, Name: j.suspect}, a); err != nil {
		return client.IgnoreNotFound(err)
	}
	addr, err := netip.ParseAddr(string(a.Spec.Address))
	if a.Spec.Pool.Name != b.pool.Name || err != nil {
		return nil // not this pool's, or refused by the CRD's validation anyway
	}
	kind := kindOrDefault(a.Spec.Claim.Kind)
	ownerUID := ownerUIDOf(a.OwnerReferences, kind, a.Spec.Claim.Name)
	if j.deletedClaim != "" && ownerUID == j.deletedClaim {
		return b.releaseIPAddress(ctx, a, true)
	}
	c, err := b.getClaim(ctx, kind, a.Spec.Claim.Name)
	switch {
	case apierrors.IsNotFound(err):
		return b.releaseIPAddress(ctx, a, true)
	case err != nil:
		return err
	case ownerUID != "" && c.object().GetUID() != ownerUID:
		return b.releaseIPAddress(ctx, a, true)
	case deleting(c.object()):
		return nil // the claim's release takes it
	}
	decided, ok, err := b.decidedName(ctx, c)
	if err != nil {
		return err
	}
	if ok && decided != a.Name {
		// The claim holds another address: this one was never handed on.
		return b.releaseIPAddress(ctx, a, false)
	}
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	if held, has := b.st.index.Lookup(a.Spec.Claim.Name); !ok && has && held != addr {
		// Being served right now with another address: whichever the claim ends up with
		// decides, so look again in a moment.
		b.st.suspectLocked(a.Name, "")
		b.retryAt(b.r.now().Add(suspectRecheck))
		return nil
	}
	for _, d := range b.st.settleLocked(a.Spec.Claim.Name, addr) {
		b.st.suspectLocked(b.addressName(d), "")
	}
	return nil
}

// settle serves a claim whose status names an address the index does not give it (another
// manager served it, or this one restarted): the index learns what the API server says. If the
// IPAddress it names is gone, the claim is served anew.
func (b *batch) settle(ctx context.Context, j *job) error {
	name, ok, err := b.decidedName(ctx, j.c)
	if err != nil {
		return err
	}
	if ok {
		a := &ipamv1.IPAddress{}
		err := b.r.APIReader.Get(ctx, types.NamespacedName{Namespace: b.pool.Namespace, Name: name}, a)
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		if addr, perr := netip.ParseAddr(string(a.Spec.Address)); err == nil && perr == nil && b.relation(a, j.c) == ownClaim {
			b.st.mu.Lock()
			for _, d := range b.st.settleLocked(j.c.object().GetName(), addr) {
				b.st.suspectLocked(b.addressName(d), "")
			}
			b.st.mu.Unlock()
			j.addr, j.fresh = addr, false
			if j.c.served(name) {
				return nil
			}
			return b.reportAllocated(ctx, j, name)
		}
	}
	// What the claim names is gone: it gets an address anew.
	b.st.mu.Lock()
	b.allocateLocked(j, b.r.now())
	b.st.mu.Unlock()
	if j.failReason != "" {
		return b.report(ctx, j)
	}
	return b.serve(ctx, j)
}

// decidedName is the IPAddress a claim's status says it holds: for an IPClaim its
// status.address; for a Cluster API claim, the address of the Cluster API IPAddress named after
// it.
func (b *batch) decidedName(ctx context.Context, c claim) (string, bool, error) {
	name, ok := c.decidedAddress()
	if !ok || name != "" {
		return name, ok, nil
	}
	cc, isCAPI := c.(capiClaim)
	if !isCAPI {
		return "", false, nil
	}
	a := &capiipamv1.IPAddress{}
	if err := b.r.APIReader.Get(ctx, client.ObjectKeyFromObject(cc.IPAddressClaim), a); err != nil {
		if apierrors.IsNotFound(err) {
			return "", false, nil
		}
		return "", false, err
	}
	if a.Spec.ClaimRef.Name != cc.Name || !isOurPool(a.Spec.PoolRef) || a.Spec.PoolRef.Name != b.pool.Name {
		return "", false, nil
	}
	return b.addressNameOf(a.Spec.Address), true, nil
}

func (b *batch) addressNameOf(address string) string {
	addr, err := netip.ParseAddr(address)
	if err != nil {
		return ""
	}
	return b.addressName(addr)
}

// getClaim reads a claim of either kind from the API server.
func (b *batch) getClaim(ctx context.Context, kind, name string) (claim, error) {
	var c claim = ipClaim{&ipamv1.IPClaim{}}
	if kind == capiClaimKind {
		c = capiClaim{&capiipamv1.IPAddressClaim{}}
	}
	err := b.r.APIReader.Get(ctx, types.NamespacedName{Namespace: b.pool.Namespace, Name: name}, c.object())
	return c, err
}

// ownerUIDOf is the UID an owner reference of that kind and name gives, or "" when none does.
func ownerUIDOf(refs []metav1.OwnerReference, kind, name string) types.UID {
	for _, ref := range refs {
		if ref.Kind == kind && ref.Name == name {
			return ref.UID
		}
	}
	return ""
}
