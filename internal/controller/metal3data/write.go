package metal3data

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// writeData writes what a reconcile changed (before is the Metal3Data as read) in at most two
// merge patches, the requests Cluster API's patch helper would send for this kind: its metadata
// and spec (the finalizer, the Secret references), then its status.
//
// The status is this controller's alone, and each write states all of it (dataStatusPatch). The
// reconcile reads from a cache that may not show this controller's last write yet; a patch
// computed against that copy, as the patch helper computes it, leaves standing whatever the copy
// does not show: a host fixed while the cache still showed the Metal3Data before its error left
// it Ready with the error, and nothing renders a Ready Metal3Data again.
func (r *Reconciler) writeData(ctx context.Context, before, data *infrav1.Metal3Data) error {
	if !equality.Semantic.DeepEqual(before.ObjectMeta, data.ObjectMeta) || !equality.Semantic.DeepEqual(before.Spec, data.Spec) {
		after := &infrav1.Metal3Data{TypeMeta: data.TypeMeta, ObjectMeta: data.ObjectMeta, Spec: data.Spec}
		from := &infrav1.Metal3Data{TypeMeta: before.TypeMeta, ObjectMeta: before.ObjectMeta, Spec: before.Spec}
		if err := r.Client.Patch(ctx, after, client.MergeFrom(from)); err != nil {
			if apierrors.IsNotFound(err) && len(data.Finalizers) == 0 {
				return nil // the last finalizer went: the Metal3Data is gone
			}
			return fmt.Errorf("writing Metal3Data %s: %w", data.Name, err)
		}
		data.ObjectMeta, data.Spec = after.ObjectMeta, after.Spec // as stored: its resourceVersion
	}
	if equality.Semantic.DeepEqual(before.Status, data.Status) {
		return nil
	}
	patch, err := dataStatusPatch(&data.Status)
	if err != nil {
		return fmt.Errorf("writing Metal3Data %s status: %w", data.Name, err)
	}
	if err := r.Client.Status().Patch(ctx, data, client.RawPatch(types.MergePatchType, patch)); err != nil {
		if apierrors.IsNotFound(err) && len(data.Finalizers) == 0 {
			return nil
		}
		return fmt.Errorf("writing Metal3Data %s status: %w", data.Name, err)
	}
	return nil
}

// dataStatusPatch is the JSON merge patch that sets a Metal3Data's status to s whatever it held
// before: every field is named, an unset one as null, which removes it.
func dataStatusPatch(s *infrav1.Metal3DataStatus) ([]byte, error) {
	return json.Marshal(map[string]any{"status": map[string]any{
		"ready":        s.Ready,
		"errorMessage": s.ErrorMessage,
		"conditions":   s.Conditions,
		"lastUpdated":  s.LastUpdated,
	}})
}

// claimStatusPatch is the JSON merge patch that sets a claim's status to s whatever it held
// before, as dataStatusPatch does for the Metal3Data: the claim read may trail what the API
// server holds, and an errorMessage cleared must be cleared there. Every field is the report's
// (metal3dataclaim.Report); the claim controller writes the same ones, and the same Ready
// condition, only before a Metal3Data serves the claim.
func claimStatusPatch(s *infrav1.Metal3DataClaimStatus) ([]byte, error) {
	return json.Marshal(map[string]any{"status": map[string]any{
		"renderedData": s.RenderedData,
		"errorMessage": s.ErrorMessage,
		"conditions":   s.Conditions,
	}})
}
