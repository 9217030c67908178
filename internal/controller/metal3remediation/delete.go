package metal3remediation

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// reconcileDelete undoes what a remediation deleted half-way left behind (the MachineHealthCheck
// deletes it once the Machine is healthy, or a person does): the host is powered on again, and
// the Node, if it is there, loses the out-of-service taint and gets its kept labels and
// annotations back.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *state) (ctrl.Result, error) {
	rem := s.rem
	if !controllerutil.ContainsFinalizer(rem, infrav1.RemediationFinalizer) {
		return ctrl.Result{}, nil
	}
	if s.host != nil && powerOffRequested(s.host, rem) {
		if err := r.setHostAnnotation(ctx, s.host, rebootAnnotation(rem), nil); err != nil {
			return ctrl.Result{}, err
		}
	}
	_, kept := rem.Annotations[nodeLabelsBackup]
	if (kept || r.outOfServiceTaint) && s.machine.DeletionTimestamp.IsZero() {
		w, err := r.getNode(ctx, s)
		if err != nil {
			progressing(rem, metav1.ConditionFalse, infrav1.RemediationWorkloadClusterUnreachableReason, fmt.Sprintf("restoring the Node before the remediation goes: %v", err))
			return ctrl.Result{}, err
		}
		if w.node != nil {
			// The host is on again (or about to be): its Node must not stay out of service.
			if res, err := r.untaint(ctx, s, w); err != nil || !res.IsZero() {
				return res, err
			}
			if err := restoreNode(ctx, w, rem); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	controllerutil.RemoveFinalizer(rem, infrav1.RemediationFinalizer)
	return ctrl.Result{}, nil
}
