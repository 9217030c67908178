package metal3data

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/metal3dataclaim"
)

// reportToClaim fills the status of the Metal3Data's claim from the outcome this reconcile
// stored (metal3dataclaim.Report), in one write when it changed: the claim learns it where the
// data is rendered, with no controller relaying it. A Metal3Data whose status says nothing yet
// (a new one's wait, held back) says nothing to its claim either; one being deleted is its
// claim's going.
func (r *Reconciler) reportToClaim(ctx context.Context, data *infrav1.Metal3Data) error {
	if !data.Status.Ready && data.Status.ErrorMessage == nil && len(data.Status.Conditions) == 0 || !data.DeletionTimestamp.IsZero() {
		return nil
	}
	claim := &infrav1.Metal3DataClaim{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: data.Namespace, Name: data.Spec.Claim.Name}, claim); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !claim.DeletionTimestamp.IsZero() || !metal3dataclaim.Ours(claim, data) {
		return nil
	}
	want := claim.DeepCopy()
	metal3dataclaim.Report(want, data)
	if equality.Semantic.DeepEqual(claim.Status, want.Status) {
		return nil
	}
	if last, unseen := r.claimWritten.Unseen(string(claim.UID), claim.ResourceVersion); unseen && equality.Semantic.DeepEqual(statusWithoutTimes(last), statusWithoutTimes(want.Status)) {
		return nil // written a moment ago; the cache will show it
	}
	patch, err := claimStatusPatch(&want.Status)
	if err == nil {
		err = r.Client.Status().Patch(ctx, want, client.RawPatch(types.MergePatchType, patch))
	}
	if apierrors.IsNotFound(err) {
		return nil // the claim went meanwhile
	}
	if err != nil {
		return fmt.Errorf("reporting Metal3Data %s's outcome in the status of Metal3DataClaim %s: %w", data.Name, claim.Name, err)
	}
	r.claimWritten.Wrote(string(claim.UID), claim.ResourceVersion, *want.Status.DeepCopy())
	return nil
}

// statusWithoutTimes is a claim status without its conditions' transition times, which a write
// on a stale copy sets anew.
func statusWithoutTimes(s infrav1.Metal3DataClaimStatus) infrav1.Metal3DataClaimStatus {
	out := *s.DeepCopy()
	for i := range out.Conditions {
		out.Conditions[i].LastTransitionTime = metav1.Time{}
	}
	return out
}
