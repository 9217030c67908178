package preprovisioning

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/poolanswer"
	"github.com/metalwire/metalwire/internal/controller/watchfilter"
	"github.com/metalwire/metalwire/pkg/render"
)

// Sharing a host-keyed claim.
//
// The claim of a host in a pool is named <host>-<pool>, the name the Metal3Data controller uses
// with IP reuse, so in the common-pool scenario both controllers use one claim and the host
// keeps one address. Whoever uses a claim is one of its owner references: this controller the
// template (non-controlling), a Metal3Data itself. Whoever stops using it removes its own
// reference, and deletes the claim only when no owner is left. Both steps are conditional on the
// claim's resourceVersion, so a claim adopted in between is never deleted under its new owner.

const templateKind = "Metal3PreprovisioningDataTemplate"

func templateOwnerRef(tmpl *infrav1.Metal3PreprovisioningDataTemplate) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: infrav1.GroupVersion.String(),
		Kind:       templateKind,
		Name:       tmpl.Name,
		UID:        tmpl.UID,
	}
}

// isTemplateRef tells whether an owner reference is a pre-provisioning template's.
func isTemplateRef(ref metav1.OwnerReference) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == infrav1.GroupVersion.Group && ref.Kind == templateKind
}

// claimAddress makes sure the host has a claim in the pool, owned by the template, and reads the
// address given so far.
func (r *HostReconciler) claimAddress(ctx context.Context, host *bmov1.BareMetalHost, tmpl *infrav1.Metal3PreprovisioningDataTemplate, pool render.PoolRef) (poolanswer.Answer, error) {
	name := infrav1.HostClaimName(host.Name, pool.Name)
	claim := &ipamv1.IPClaim{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: host.Namespace, Name: name}, claim)
	if apierrors.IsNotFound(err) {
		claim = &ipamv1.IPClaim{
			ObjectMeta: metav1.ObjectMeta{
				Name:            name,
				Namespace:       host.Namespace,
				Labels:          watchfilter.Carry(map[string]string{templateLabel: tmpl.Name, hostLabel: host.Name}, tmpl),
				OwnerReferences: []metav1.OwnerReference{templateOwnerRef(tmpl)},
			},
			Spec: ipamv1.IPClaimSpec{Pool: corev1.ObjectReference{
				APIVersion: ipamv1.GroupVersion.String(), Kind: render.DefaultPoolKind, Namespace: host.Namespace, Name: pool.Name,
			}},
		}
		if err := r.Client.Create(ctx, claim); err != nil && !apierrors.IsAlreadyExists(err) {
			return poolanswer.Answer{}, fmt.Errorf("creating IPClaim %s: %w", name, err)
		}
		// New, or made by someone the cache has not shown us yet: its event brings us back.
		return poolanswer.WaitingFor(pool, fmt.Sprintf("IPClaim %s created", name)), nil
	}
	if err != nil {
		return poolanswer.Answer{}, fmt.Errorf("reading IPClaim %s: %w", name, err)
	}
	if claim.Spec.Pool.Name != pool.Name {
		return poolanswer.Answer{}, fmt.Errorf("IPClaim %s already exists for pool %s; delete it so that a claim on pool %s can be made", name, claim.Spec.Pool.Name, pool.Name)
	}
	if claim.DeletionTimestamp.IsZero() {
		if err := r.adopt(ctx, claim, host, tmpl); err != nil {
			return poolanswer.Answer{}, err
		}
	}
	return poolanswer.OfIPClaim(ctx, r.Client, pool, claim)
}

// adopt makes an existing claim the template's too: made by a Metal3Data (IP reuse) or by an
// earlier pre-provisioning of the host.
func (r *HostReconciler) adopt(ctx context.Context, claim *ipamv1.IPClaim, host *bmov1.BareMetalHost, tmpl *infrav1.Metal3PreprovisioningDataTemplate) error {
	owned := slices.ContainsFunc(claim.OwnerReferences, func(ref metav1.OwnerReference) bool { return ref.UID == tmpl.UID })
	if owned && claim.Labels[templateLabel] == tmpl.Name && claim.Labels[hostLabel] == host.Name {
		return nil
	}
	before := claim.DeepCopy()
	if !owned {
		claim.OwnerReferences = append(claim.OwnerReferences, templateOwnerRef(tmpl))
	}
	if claim.Labels == nil {
		claim.Labels = map[string]string{}
	}
	claim.Labels[templateLabel], claim.Labels[hostLabel] = tmpl.Name, host.Name
	if err := r.Client.Patch(ctx, claim, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("sharing IPClaim %s with template %s: %w", claim.Name, tmpl.Name, err)
	}
	return nil
}

// hostClaims lists the claims this controller made or shares for a host.
func (r *HostReconciler) hostClaims(ctx context.Context, ns, host string) ([]ipamv1.IPClaim, error) {
	list := &ipamv1.IPClaimList{}
	if err := r.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{hostLabel: host}); err != nil {
		return nil, fmt.Errorf("listing the IPClaims of host %s: %w", host, err)
	}
	// Under --watch-filter, those another manager made for the host are its own.
	return slices.DeleteFunc(list.Items, func(c ipamv1.IPClaim) bool { return !watchfilter.Matches(&c, r.WatchFilter) }), nil
}

// releaseClaim stops this controller's use of a claim: it drops the templates' owner references
// and labels, and deletes the claim when no owner is left. It reports whether it deleted it.
func releaseClaim(ctx context.Context, c client.Client, claim *ipamv1.IPClaim) (deleted bool, err error) {
	if !claim.DeletionTimestamp.IsZero() {
		return false, nil
	}
	others := slices.DeleteFunc(slices.Clone(claim.OwnerReferences), isTemplateRef)
	if len(others) == 0 {
		rv := claim.ResourceVersion
		err := c.Delete(ctx, claim, client.Preconditions{UID: &claim.UID, ResourceVersion: &rv})
		if err != nil && !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("deleting IPClaim %s: %w", claim.Name, err)
		}
		return err == nil, nil
	}
	before := claim.DeepCopy()
	claim.OwnerReferences = others
	delete(claim.Labels, templateLabel)
	delete(claim.Labels, hostLabel)
	if err := c.Patch(ctx, claim, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil && !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("leaving IPClaim %s to its other owners: %w", claim.Name, err)
	}
	return false, nil
}
