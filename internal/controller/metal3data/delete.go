package metal3data

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	capiipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/dataindex"
)

// reconcileDelete releases the addresses and deletes the Secrets, then lets the Metal3Data go.
// It waits for the address claims to be gone, so that the IPAM controller has released the
// addresses before the index — and with it the claim names — can be taken again.
func (r *Reconciler) reconcileDelete(ctx context.Context, data *infrav1.Metal3Data) (ctrl.Result, error) {
	remaining, err := r.releaseClaims(ctx, data)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.deleteSecrets(ctx, data); err != nil {
		return ctrl.Result{}, err
	}
	if len(remaining) > 0 {
		msg := fmt.Sprintf("waiting for address claims to be released: %v", remaining)
		data.Status.Ready = false
		setCondition(data, infrav1.DataReadyCondition, metav1.ConditionFalse, infrav1.DataDeletingReason, msg)
		return ctrl.Result{}, nil
	}
	controllerutil.RemoveFinalizer(data, infrav1.DataFinalizer)
	r.forgetWrites(data)
	return ctrl.Result{}, nil
}

// releaseClaims deletes the address claims this Metal3Data owns alone and drops its ownership
// of shared ones (IP reuse: the host's claim outlives this Metal3Data while another owner
// holds it). It returns the claims still there.
func (r *Reconciler) releaseClaims(ctx context.Context, data *infrav1.Metal3Data) ([]string, error) {
	ipClaims := &ipamv1.IPClaimList{}
	if err := r.Client.List(ctx, ipClaims, client.InNamespace(data.Namespace), client.MatchingFields{dataindex.AddressClaimByData: data.Name}); err != nil {
		return nil, fmt.Errorf("listing the IPClaims of Metal3Data %s: %w", data.Name, err)
	}
	capiClaims := &capiipamv1.IPAddressClaimList{}
	if err := r.Client.List(ctx, capiClaims, client.InNamespace(data.Namespace), client.MatchingFields{dataindex.AddressClaimByData: data.Name}); err != nil {
		return nil, fmt.Errorf("listing the IPAddressClaims of Metal3Data %s: %w", data.Name, err)
	}
	objs := make([]client.Object, 0, len(ipClaims.Items)+len(capiClaims.Items))
	for i := range ipClaims.Items {
		objs = append(objs, &ipClaims.Items[i])
	}
	for i := range capiClaims.Items {
		objs = append(objs, &capiClaims.Items[i])
	}
	var remaining []string
	for _, o := range objs {
		if !ownedBy(o, data) {
			continue
		}
		others := slices.DeleteFunc(slices.Clone(o.GetOwnerReferences()), func(ref metav1.OwnerReference) bool { return ref.UID == data.UID })
		if len(others) > 0 {
			before := o.DeepCopyObject().(client.Object)
			o.SetOwnerReferences(others)
			if err := r.Client.Patch(ctx, o, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil && !apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("leaving shared claim %s: %w", o.GetName(), err)
			}
			continue
		}
		remaining = append(remaining, o.GetName())
		if o.GetDeletionTimestamp().IsZero() {
			if err := r.Client.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("deleting claim %s: %w", o.GetName(), err)
			}
		}
	}
	return remaining, nil
}

// deleteSecrets deletes the Secrets the Metal3Data names, and those its names would have if
// it failed before recording them.
func (r *Reconciler) deleteSecrets(ctx context.Context, data *infrav1.Metal3Data) error {
	names := map[string]bool{}
	for _, ref := range []*corev1.SecretReference{data.Spec.MetaData, data.Spec.NetworkData} {
		if ref != nil && ref.Name != "" {
			names[ref.Name] = true
		}
	}
	md, nd := infrav1.DataSecretNames(data, data.Spec.Claim.Name)
	names[md], names[nd] = true, true
	for name := range names {
		s, err := r.secretMeta(ctx, client.ObjectKey{Namespace: data.Namespace, Name: name})
		if err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		if !ownedBy(s, data) {
			continue // someone else's Secret with a name like ours: not ours to delete
		}
		if err := r.Client.Delete(ctx, s); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting Secret %s: %w", name, err)
		}
	}
	return nil
}
