package metal3machine

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// pauseHost annotates the machine's host paused while the machine or its cluster is. While
// paused the machine's patch carries only its Paused condition, so a failure here is an event
// and a retry.
func (r *Reconciler) pauseHost(ctx context.Context, m3m *infrav1.Metal3Machine) error {
	ann := m3m.Annotations[infrav1.HostAnnotation]
	if ann == "" {
		return nil
	}
	key, err := parseHostAnnotation(ann, m3m.Namespace)
	if err != nil {
		return nil //nolint:nilerr // a malformed annotation names no host to pause; reconcileNormal reports it
	}
	host := &bmov1.BareMetalHost{}
	if err := r.Client.Get(ctx, key, host); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !consumedBy(host, m3m) {
		return nil
	}
	paused := host.DeepCopy()
	if !pause(paused) {
		return nil
	}
	if err := r.Client.Patch(ctx, paused, client.MergeFrom(host)); err != nil {
		r.Recorder.Eventf(m3m, host, corev1.EventTypeWarning, infrav1.BareMetalHostPauseAnnotationSetFailedReason, "Pause",
			"pausing host %s: %v", host.Name, err)
		return fmt.Errorf("pausing BareMetalHost %s: %w", key, err)
	}
	return nil
}
