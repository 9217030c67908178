package metal3remediation

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// soon is the requeue after a step whose result the next reconcile reads (our own write
// triggers one too; this is the fallback).
const soon = time.Second

// reconcileNormal runs the reboot strategy: Running (power off, taint or delete the Node) ->
// Waiting (power on, untaint or restore the Node, or retry after timeoutSeconds) -> done, or
// "Deleting machine" once retries run out.
func (r *Reconciler) reconcileNormal(ctx context.Context, s *state) (ctrl.Result, error) {
	rem := s.rem
	switch rem.Status.Phase {
	case infrav1.PhaseDeleting, infrav1.PhaseFailed:
		return ctrl.Result{}, nil
	}
	if s.host == nil {
		progressing(rem, metav1.ConditionFalse, infrav1.RemediationHostNotFoundReason, s.hostProblem)
		return ctrl.Result{RequeueAfter: r.Recheck}, nil
	}
	if !s.host.Spec.Online {
		rem.Status.Phase = infrav1.PhaseFailed
		progressing(rem, metav1.ConditionFalse, infrav1.RemediationHostOfflineReason, fmt.Sprintf(
			"BareMetalHost %s has spec.online false: it was powered off on purpose and is not rebooted; set spec.online true and delete this Metal3Remediation to remediate again", s.host.Name))
		return ctrl.Result{}, nil
	}
	if rem.Spec.Strategy == nil || rem.Spec.Strategy.Type != infrav1.RebootRemediationStrategy {
		progressing(rem, metav1.ConditionFalse, infrav1.RemediationUnsupportedStrategyReason,
			"spec.strategy.type must be Reboot (the only strategy); nothing is done")
		return ctrl.Result{}, nil
	}

	if rem.Status.Phase == "" {
		rem.Status.Phase = infrav1.PhaseRunning
		rem.Status.LastRemediated = ptr.To(metav1.NewTime(r.now()))
	}
	switch rem.Status.Phase {
	case infrav1.PhaseRunning:
		return r.powerOff(ctx, s)
	case infrav1.PhaseWaiting:
		return r.waitForRecovery(ctx, s)
	}
	return ctrl.Result{}, nil
}

// powerOff is the Running phase: keep the host powered off through BMO's reboot annotation
// and, once it is off, taint its Node out-of-service and wait for the drain, or delete it (only
// then: a Node tainted or deleted while its host still runs would let a second copy of its
// workloads start elsewhere).
func (r *Reconciler) powerOff(ctx context.Context, s *state) (ctrl.Result, error) {
	rem, host := s.rem, s.host
	if !controllerutil.ContainsFinalizer(rem, infrav1.RemediationFinalizer) {
		// Saved before the host is touched, so the host is never left off by a remediation
		// deleted meanwhile.
		controllerutil.AddFinalizer(rem, infrav1.RemediationFinalizer)
		return ctrl.Result{RequeueAfter: soon}, nil
	}
	if !powerOffRequested(host, rem) {
		if err := r.setHostAnnotation(ctx, host, rebootAnnotation(rem), ptr.To(hardReboot)); err != nil {
			return ctrl.Result{}, err
		}
		r.Recorder.Eventf(rem, host, corev1.EventTypeNormal, "PoweringOff", "Reboot", "powering off BareMetalHost %s (attempt %d)", host.Name, rem.Status.RetryCount+1)
		progressing(rem, metav1.ConditionTrue, infrav1.RemediationPoweringOffReason, fmt.Sprintf("waiting for BareMetalHost %s to power off", host.Name))
		return ctrl.Result{RequeueAfter: r.Recheck}, nil
	}
	if host.Status.PoweredOn {
		progressing(rem, metav1.ConditionTrue, infrav1.RemediationPoweringOffReason, fmt.Sprintf("waiting for BareMetalHost %s to power off", host.Name))
		return ctrl.Result{RequeueAfter: r.Recheck}, nil
	}

	w, err := r.getNode(ctx, s)
	if err != nil {
		progressing(rem, metav1.ConditionFalse, infrav1.RemediationWorkloadClusterUnreachableReason, fmt.Sprintf("the host is off; %s its Node: %v", r.nodeVerb(), err))
		return ctrl.Result{RequeueAfter: r.Recheck}, nil
	}
	if w.node != nil && r.outOfServiceTaint {
		return r.taintAndDrain(ctx, s, w)
	}
	if w.node != nil {
		changed, err := backupNode(rem, w.node)
		if err != nil {
			return ctrl.Result{}, err
		}
		if changed {
			// Save the labels and annotations before the Node goes.
			return ctrl.Result{RequeueAfter: soon}, nil
		}
		if w.node.DeletionTimestamp.IsZero() {
			if err := client.IgnoreNotFound(w.client.Delete(ctx, w.node)); err != nil {
				return ctrl.Result{}, fmt.Errorf("deleting Node %s of the workload cluster: %w", w.node.Name, err)
			}
			r.Recorder.Eventf(rem, host, corev1.EventTypeNormal, "NodeDeleted", "DeleteNode", "deleted Node %s while its host is off", w.node.Name)
		}
		progressing(rem, metav1.ConditionTrue, infrav1.RemediationDeletingNodeReason, fmt.Sprintf("waiting for Node %s to go", w.node.Name))
		return ctrl.Result{RequeueAfter: r.Recheck}, nil
	}
	rem.Status.Phase = infrav1.PhaseWaiting
	return ctrl.Result{RequeueAfter: soon}, nil
}

// waitForRecovery is the Waiting phase: power the host on again, put the kept labels and
// annotations on the Node the kubelet registers, and, if timeoutSeconds pass first, retry or
// give up.
func (r *Reconciler) waitForRecovery(ctx context.Context, s *state) (ctrl.Result, error) {
	rem, host := s.rem, s.host
	if powerOffRequested(host, rem) {
		if err := r.setHostAnnotation(ctx, host, rebootAnnotation(rem), nil); err != nil {
			return ctrl.Result{}, err
		}
		r.Recorder.Eventf(rem, host, corev1.EventTypeNormal, "PoweringOn", "Reboot", "powering BareMetalHost %s on again", host.Name)
		progressing(rem, metav1.ConditionTrue, infrav1.RemediationPoweringOnReason, fmt.Sprintf("waiting for BareMetalHost %s to power on", host.Name))
		return ctrl.Result{RequeueAfter: r.Recheck}, nil
	}
	if host.Status.PoweredOn && controllerutil.ContainsFinalizer(rem, infrav1.RemediationFinalizer) {
		w, err := r.getNode(ctx, s)
		if err != nil {
			progressing(rem, metav1.ConditionFalse, infrav1.RemediationWorkloadClusterUnreachableReason, fmt.Sprintf("the host is on again; looking for its Node: %v", err))
			return ctrl.Result{RequeueAfter: r.Recheck}, nil
		}
		if w.node != nil {
			if res, err := r.untaint(ctx, s, w); err != nil || !res.IsZero() {
				return res, err
			}
			// Labels kept by a remediation that deleted the Node (with the delete mode, or
			// begun by CAPM3 or before a change of mode) are put back whatever the mode.
			if err := restoreNode(ctx, w, rem); err != nil {
				return ctrl.Result{}, err
			}
			controllerutil.RemoveFinalizer(rem, infrav1.RemediationFinalizer)
			progressing(rem, metav1.ConditionFalse, infrav1.RemediationDoneReason, fmt.Sprintf(
				"BareMetalHost %s rebooted and Node %s is back; the MachineHealthCheck deletes this remediation once the Machine is healthy, or it is retried after timeoutSeconds", host.Name, w.node.Name))
			return ctrl.Result{RequeueAfter: r.Recheck}, nil
		}
	}

	timeout := time.Duration(rem.Spec.Strategy.TimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = defaultTimeoutSeconds * time.Second
	}
	left := timeout
	if rem.Status.LastRemediated != nil {
		left = rem.Status.LastRemediated.Add(timeout).Sub(r.now())
	}
	if left > 0 {
		// Without the finalizer the Node is restored already, and the condition says Done.
		if host.Status.PoweredOn && controllerutil.ContainsFinalizer(rem, infrav1.RemediationFinalizer) {
			progressing(rem, metav1.ConditionTrue, infrav1.RemediationWaitingForNodeReason, fmt.Sprintf(
				"BareMetalHost %s is on again; waiting for the Machine to become healthy, at most %s more", host.Name, left.Round(time.Second)))
		}
		return ctrl.Result{RequeueAfter: min(r.Recheck, left)}, nil
	}

	if rem.Status.RetryCount < rem.Spec.Strategy.RetryLimit {
		rem.Status.RetryCount++
		rem.Status.Phase = infrav1.PhaseRunning
		rem.Status.LastRemediated = ptr.To(metav1.NewTime(r.now()))
		r.Recorder.Eventf(rem, host, corev1.EventTypeWarning, "Retrying", "Reboot", "the Machine is still unhealthy %s after the reboot; retry %d of %d",
			timeout, rem.Status.RetryCount, rem.Spec.Strategy.RetryLimit)
		return ctrl.Result{RequeueAfter: soon}, nil
	}

	why := fmt.Sprintf("still unhealthy after %d reboot(s) of BareMetalHost %s; the host is marked %s and the Machine handed back to its owner to be replaced",
		rem.Status.RetryCount+1, host.Name, infrav1.UnhealthyAnnotation)
	if err := r.handMachineToOwner(ctx, s.machine, why); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.setHostAnnotation(ctx, host, infrav1.UnhealthyAnnotation, ptr.To(infrav1.RemediationUnhealthyValue)); err != nil {
		return ctrl.Result{}, err
	}
	rem.Status.Phase = infrav1.PhaseDeleting
	// The host is on again (the reboot annotation went in Waiting): nothing is left to undo.
	controllerutil.RemoveFinalizer(rem, infrav1.RemediationFinalizer)
	progressing(rem, metav1.ConditionFalse, infrav1.RemediationRetriesExhaustedReason, why)
	r.Recorder.Eventf(rem, host, corev1.EventTypeWarning, "RetriesExhausted", "Remediate", "%s", why)
	return ctrl.Result{}, nil
}
