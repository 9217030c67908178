package v1beta1

import (
	"encoding/json"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// How nothing is lost between versions:
//
//   - v1beta2 -> v1beta1 (ConvertFrom): the whole v1beta2 object (spec and status) is written into
//     the v1beta1 object's annotation cluster.x-k8s.io/conversion-data, as Cluster API's
//     providers do. On the way back (ConvertTo) a part of the v1beta2 object is taken from that
//     annotation whenever the v1beta1 object still shows it unchanged; fields v1beta1 cannot
//     show at all (a template's metadata, v1beta2 conditions of the data kinds) always are.
//   - v1beta1 -> v1beta2 (ConvertTo): the few v1beta1 fields v1beta2 has no place for (a
//     Metal3Data's templateReference, v1beta1-contract conditions and failure fields, a
//     Metal3Machine's phase) go into the v1beta2 object's annotation SpokeDataAnnotation, and
//     come back from it in ConvertFrom.

// SpokeDataAnnotation holds, on a v1beta2 object, the v1beta1 fields v1beta2 has no place for.
const SpokeDataAnnotation = "infrastructure.metalwire.io/v1beta1-conversion-data"

// HubDataAnnotation holds, on a v1beta1 object, the v1beta2 object it was converted from: the
// annotation Cluster API's providers keep it in (its util/conversion.DataAnnotation). That
// package is not imported: it links Go's testing package (its fuzzing helpers) into every
// binary that converts.
const HubDataAnnotation = "cluster.x-k8s.io/conversion-data"

// restoreHub reads the v1beta2 object a v1beta1 object was converted from (the conversion-data
// annotation, which it removes from meta) into restored. It reports whether there was one.
func restoreHub(meta metav1.Object, restored any) (bool, error) {
	a := meta.GetAnnotations()
	data, ok := a[HubDataAnnotation]
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal([]byte(data), restored); err != nil {
		return false, fmt.Errorf("annotation %s: %w", HubDataAnnotation, err)
	}
	delete(a, HubDataAnnotation)
	meta.SetAnnotations(a)
	return true, nil
}

// saveHub writes hub, without its metadata, into spoke's conversion-data annotation.
func saveHub(hub, spoke metav1.Object) error {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(hub)
	if err != nil {
		return fmt.Errorf("annotation %s: %w", HubDataAnnotation, err)
	}
	delete(u, "metadata")
	data, err := json.Marshal(u)
	if err != nil {
		return fmt.Errorf("annotation %s: %w", HubDataAnnotation, err)
	}
	a := spoke.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[HubDataAnnotation] = string(data)
	spoke.SetAnnotations(a)
	return nil
}

// saveSpokeData writes the v1beta1-only fields (a v1beta1 object holding only them) into hub's
// SpokeDataAnnotation, or nothing when they are all empty.
func saveSpokeData(only any, empty bool, hub metav1.Object) error {
	if empty {
		return nil
	}
	data, err := json.Marshal(only)
	if err != nil {
		return err
	}
	annotations := hub.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[SpokeDataAnnotation] = string(data)
	hub.SetAnnotations(annotations)
	return nil
}

// takeSpokeData reads SpokeDataAnnotation from meta (a v1beta1 object's metadata copied from
// the hub) into only, and removes it from meta.
func takeSpokeData(meta metav1.Object, only any) error {
	annotations := meta.GetAnnotations()
	data, ok := annotations[SpokeDataAnnotation]
	if !ok {
		return nil
	}
	delete(annotations, SpokeDataAnnotation)
	meta.SetAnnotations(annotations)
	if err := json.Unmarshal([]byte(data), only); err != nil {
		return fmt.Errorf("annotation %s: %w", SpokeDataAnnotation, err)
	}
	return nil
}

// same says whether two values read the same (nil and empty collections are equal).
func same(a, b any) bool {
	return apiequality.Semantic.DeepEqual(a, b)
}

// mapSlice converts each element of in, keeping nil as nil.
func mapSlice[A, B any](in []A, f func(A) B) []B {
	if in == nil {
		return nil
	}
	out := make([]B, len(in))
	for i := range in {
		out[i] = f(in[i])
	}
	return out
}

// convertPtr converts what in points to, keeping nil as nil.
func convertPtr[A, B any](in *A, f func(A) B) *B {
	if in == nil {
		return nil
	}
	out := f(*in)
	return &out
}

// castStrings converts a slice between string types.
func castStrings[B, A ~string](in []A) []B {
	return mapSlice(in, func(a A) B { return B(a) })
}

// castString converts a pointer between string types.
func castString[B, A ~string](in *A) *B {
	if in == nil {
		return nil
	}
	out := B(*in)
	return &out
}

// deprecatedToHub puts v1beta1's status conditions and failure fields where upstream's v1beta2
// keeps them (status.deprecated.v1beta1), or returns nil when there are none.
func deprecatedToHub(reason, message *string, conditions Conditions) *infrav1.DeprecatedStatus {
	if reason == nil && message == nil && conditions == nil {
		return nil
	}
	return &infrav1.DeprecatedStatus{V1Beta1: &infrav1.V1Beta1DeprecatedStatus{
		FailureReason: reason, FailureMessage: message,
		Conditions: mapSlice(conditions, func(c Condition) infrav1.V1Beta1Condition { return infrav1.V1Beta1Condition(c) }),
	}}
}

// deprecatedFromHub reads status.deprecated.v1beta1; ok is false when the hub has none.
func deprecatedFromHub(in *infrav1.DeprecatedStatus) (reason, message *string, conditions Conditions, ok bool) {
	if in == nil || in.V1Beta1 == nil {
		return nil, nil, nil, false
	}
	d := in.V1Beta1
	conditions = mapSlice(d.Conditions, func(c infrav1.V1Beta1Condition) Condition { return Condition(c) })
	return d.FailureReason, d.FailureMessage, conditions, true
}

// deprecatedKept is deprecatedToHub, but gives back the v1beta2 object's own status.deprecated
// (restored from the conversion-data annotation when ok) while v1beta1 shows it unchanged.
func deprecatedKept(restored *infrav1.DeprecatedStatus, ok bool, reason, message *string, conditions Conditions) *infrav1.DeprecatedStatus {
	if ok {
		r, m, c, _ := deprecatedFromHub(restored)
		if same(r, reason) && same(m, message) && same(c, conditions) {
			return restored
		}
	}
	return deprecatedToHub(reason, message, conditions)
}
