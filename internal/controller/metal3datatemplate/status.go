package metal3datatemplate

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// copyTemplate copies a template for a reconcile to change, sharing its status.indexes with the
// original: no reconcile changes that list in place (allocate replaces it), so the copy costs the
// template's metadata, spec and conditions, not an entry per claim served.
func copyTemplate(t *infrav1.Metal3DataTemplate) *infrav1.Metal3DataTemplate {
	indexes := t.Status.Indexes
	shallow := *t
	shallow.Status.Indexes = nil
	out := shallow.DeepCopy()
	out.Status.Indexes = indexes
	return out
}

// writeTemplate writes what a reconcile changed (before is the template as read) in at most two
// merge patches, the requests Cluster API's patch helper would send for this kind: its metadata
// (the finalizer), then its status. No reconcile changes the spec. Neither patch is computed from
// the whole template: the helper turned the template, an index entry per claim, into a map twice
// and diffed it on every reconcile; statusPatch compares the indexes as they are and writes them
// only when they changed.
func (r *Reconciler) writeTemplate(ctx context.Context, before, tmpl *infrav1.Metal3DataTemplate) error {
	if !equality.Semantic.DeepEqual(before.ObjectMeta, tmpl.ObjectMeta) {
		after := &infrav1.Metal3DataTemplate{TypeMeta: tmpl.TypeMeta, ObjectMeta: tmpl.ObjectMeta}
		from := &infrav1.Metal3DataTemplate{TypeMeta: before.TypeMeta, ObjectMeta: before.ObjectMeta}
		if err := r.Client.Patch(ctx, after, client.MergeFrom(from)); err != nil {
			if apierrors.IsNotFound(err) && len(tmpl.Finalizers) == 0 {
				return nil // the last finalizer went: the template is gone
			}
			return fmt.Errorf("writing Metal3DataTemplate %s (finalizer): %w", tmpl.Name, err)
		}
		tmpl.ObjectMeta = after.ObjectMeta // the stored metadata: its resourceVersion
	}
	data, changed, err := statusPatch(&before.Status, &tmpl.Status)
	if err != nil || !changed {
		return err
	}
	if err := r.Client.Status().Patch(ctx, tmpl, client.RawPatch(types.MergePatchType, data)); err != nil {
		if apierrors.IsNotFound(err) && len(tmpl.Finalizers) == 0 {
			return nil
		}
		return fmt.Errorf("writing Metal3DataTemplate %s status: %w", tmpl.Name, err)
	}
	return nil
}

// statusPatch is the JSON merge patch that turns the status before into after, as
// client.MergeFrom computes it, and whether there is anything to write. The indexes are compared
// entry by entry and marshalled only when they changed: a merge patch replaces a list whole.
func statusPatch(before, after *infrav1.Metal3DataTemplateStatus) ([]byte, bool, error) {
	b, a := *before, *after
	b.Indexes, a.Indexes = nil, nil
	bj, err := json.Marshal(b)
	if err != nil {
		return nil, false, err
	}
	aj, err := json.Marshal(a)
	if err != nil {
		return nil, false, err
	}
	rest, err := jsonpatch.CreateMergePatch(bj, aj)
	if err != nil {
		return nil, false, err
	}
	status := map[string]any{}
	if err := json.Unmarshal(rest, &status); err != nil {
		return nil, false, err
	}
	// indexes is omitted when nil (omitzero): a nil list and an empty one are different JSON.
	if (before.Indexes == nil) != (after.Indexes == nil) || !slices.Equal(before.Indexes, after.Indexes) {
		if after.Indexes == nil {
			status["indexes"] = nil
		} else {
			status["indexes"] = after.Indexes
		}
	}
	if len(status) == 0 {
		return nil, false, nil
	}
	data, err := json.Marshal(map[string]any{"status": status})
	return data, true, err
}
