package ippool

import (
	"context"
	"fmt"
	"net/netip"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	capiipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
)

// release deletes what a deleted claim held, then lets the claim go. Every IPAddress the claim
// may hold is found (the index, the recorded address, the cache), so a claim deleted while its
// IPAddress was being created leaks nothing.
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
	if rec, ok := recordedAddress(j.c); ok && b.pool.Spec.NamePrefix != "" {
		names[b.addressName(rec)] = true
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
		if err := b.deleteAddress(ctx, j, name); err != nil {
			return err
		}
	}
	if cc, ok := j.c.(capiClaim); ok {
		if err := b.deleteCAPIAddress(ctx, cc.IPAddressClaim); err != nil {
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

// deleteAddress deletes one IPAddress if it belongs to the claim, and frees it in the index.
func (b *batch) deleteAddress(ctx context.Context, j *job, name string) error {
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
	if !b.belongsTo(a, j.c) {
		return nil
	}
	if controllerutil.ContainsFinalizer(a, ipamv1.IPAddressFinalizer) {
		// Objects written by upstream's controller carry it; we release them the same way.
		before := a.DeepCopy()
		controllerutil.RemoveFinalizer(a, ipamv1.IPAddressFinalizer)
		if err := b.r.Client.Patch(ctx, a, client.MergeFrom(before), fieldOwner); err != nil {
			return client.IgnoreNotFound(err)
		}
	}
	if err := b.r.Client.Delete(ctx, a, client.Preconditions{UID: &a.UID}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting IPAddress %s: %w", name, err)
	}
	if b.st != nil {
		if addr, err := netip.ParseAddr(string(a.Spec.Address)); err == nil {
			b.st.releaseIfHeld(a.Spec.Claim.Name, addr, b.r.now())
		}
	}
	return nil
}

// deleteCAPIAddress deletes the Cluster API IPAddress of a claim, if it is the one we made.
func (b *batch) deleteCAPIAddress(ctx context.Context, c *capiipamv1.IPAddressClaim) error {
	a := &capiipamv1.IPAddress{}
	if err := b.r.APIReader.Get(ctx, client.ObjectKeyFromObject(c), a); err != nil {
		return client.IgnoreNotFound(err)
	}
	if a.Spec.ClaimRef.Name != c.Name || !isOurPool(a.Spec.PoolRef) {
		return nil
	}
	if controllerutil.ContainsFinalizer(a, ipamv1.CAPIIPAddressFinalizer) {
		before := a.DeepCopy()
		controllerutil.RemoveFinalizer(a, ipamv1.CAPIIPAddressFinalizer)
		if err := b.r.Client.Patch(ctx, a, client.MergeFrom(before), fieldOwner); err != nil {
			return client.IgnoreNotFound(err)
		}
	}
	if err := b.r.Client.Delete(ctx, a); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Cluster API IPAddress %s: %w", a.Name, err)
	}
	return nil
}
