package metal3remediation

import (
	"context"
	"encoding/json"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// rebootAnnotationPrefix plus the remediation's UID is the key of BMO's reboot annotation that
// keeps the host powered off while present (CAPM3's key, so that a takeover finds its own).
const rebootAnnotationPrefix = "reboot.metal3.io/metal3-remediation-"

// rebootAnnotation is the reboot annotation key of one remediation.
func rebootAnnotation(rem *infrav1.Metal3Remediation) string {
	return rebootAnnotationPrefix + string(rem.UID)
}

// hardReboot is the annotation's value: BMO powers the host off at once, without asking the
// operating system (which is not answering: that is why it is being remediated).
var hardReboot = func() string {
	b, err := json.Marshal(map[string]string{"mode": "hard"})
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// powerOffRequested says whether the host carries this remediation's reboot annotation.
func powerOffRequested(host *bmov1.BareMetalHost, rem *infrav1.Metal3Remediation) bool {
	_, ok := host.Annotations[rebootAnnotation(rem)]
	return ok
}

// setHostAnnotation sets (value non-nil) or removes one annotation with a merge patch, so that
// nothing else of BMO's object is touched.
func (r *Reconciler) setHostAnnotation(ctx context.Context, host *bmov1.BareMetalHost, key string, value *string) error {
	if cur, ok := host.Annotations[key]; (value == nil && !ok) || (value != nil && ok && cur == *value) {
		return nil
	}
	var v any
	if value != nil {
		v = *value
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{key: v}}})
	if err != nil {
		return err
	}
	if err := r.Client.Patch(ctx, host, client.RawPatch("application/merge-patch+json", body)); err != nil {
		return fmt.Errorf("setting annotation %s on BareMetalHost %s/%s: %w", key, host.Namespace, host.Name, err)
	}
	return nil
}
