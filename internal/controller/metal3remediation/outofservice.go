package metal3remediation

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// outOfServiceTaint is the taint Kubernetes' non-graceful node shutdown reads (upstream CAPM3's
// key, value and effect): pods on the Node that do not tolerate it are deleted, terminating ones
// force-deleted, and their volumes detached, so that they start elsewhere without waiting for a
// kubelet that will not answer.
var outOfServiceTaint = corev1.Taint{
	Key:    corev1.TaintNodeOutOfService,
	Value:  "nodeshutdown",
	Effect: corev1.TaintEffectNoExecute,
}

// hasOutOfServiceTaint says whether the Node carries the taint (whatever its value, as
// Taint.MatchTaint compares key and effect).
func hasOutOfServiceTaint(node *corev1.Node) bool {
	for i := range node.Spec.Taints {
		if node.Spec.Taints[i].MatchTaint(&outOfServiceTaint) {
			return true
		}
	}
	return false
}

// setOutOfServiceTaint adds (on) or removes the taint. The patch carries the Node's
// resourceVersion: taints are a list a merge patch replaces whole, and another controller's
// taint written meanwhile must not be lost (a conflict is retried).
func setOutOfServiceTaint(ctx context.Context, c client.Client, node *corev1.Node, on bool, now metav1.Time) error {
	if hasOutOfServiceTaint(node) == on {
		return nil
	}
	orig := node.DeepCopy()
	if on {
		t := outOfServiceTaint
		t.TimeAdded = &now
		node.Spec.Taints = append(node.Spec.Taints, t)
	} else {
		kept := make([]corev1.Taint, 0, len(node.Spec.Taints))
		for _, t := range node.Spec.Taints {
			if !t.MatchTaint(&outOfServiceTaint) {
				kept = append(kept, t)
			}
		}
		node.Spec.Taints = kept
	}
	if err := c.Patch(ctx, node, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		verb := "adding the out-of-service taint to"
		if !on {
			verb = "removing the out-of-service taint from"
		}
		return fmt.Errorf("%s Node %s of the workload cluster: %w", verb, node.Name, err)
	}
	return nil
}

// drainBlocker is upstream's rule for a tainted Node being drained: no pod on it is still
// terminating, and no VolumeAttachment names it. It returns what is still there ("" when
// drained). Pods not being deleted (DaemonSet pods tolerating the taint) do not block: the
// taint deletes the others, and those are the ones that must not run twice.
func drainBlocker(ctx context.Context, c client.Client, node string) (string, error) {
	pods := &corev1.PodList{}
	// The field selector is answered by the API server: the ClusterCache caches no Pods.
	if err := c.List(ctx, pods, client.MatchingFields{"spec.nodeName": node}); err != nil {
		return "", fmt.Errorf("listing the pods on Node %s: %w", node, err)
	}
	for i := range pods.Items {
		if !pods.Items[i].DeletionTimestamp.IsZero() {
			return fmt.Sprintf("pod %s/%s (terminating)", pods.Items[i].Namespace, pods.Items[i].Name), nil
		}
	}
	// VolumeAttachments have no field selector on spec.nodeName.
	attachments := &storagev1.VolumeAttachmentList{}
	if err := c.List(ctx, attachments); err != nil {
		return "", fmt.Errorf("listing the VolumeAttachments of the workload cluster: %w", err)
	}
	for i := range attachments.Items {
		if attachments.Items[i].Spec.NodeName == node {
			return "VolumeAttachment " + attachments.Items[i].Name, nil
		}
	}
	return "", nil
}

// taintAndDrain ends the Running phase in the taint mode: the host is off, so its Node is
// tainted out-of-service, and the host is powered on again only once Kubernetes has removed the
// Node's terminating pods and detached its volumes (upstream's order), so that nothing of them
// is still bound to this Node when the host comes back.
func (r *Reconciler) taintAndDrain(ctx context.Context, s *state, w *workloadNode) (ctrl.Result, error) {
	rem, node := s.rem, w.node
	if !hasOutOfServiceTaint(node) {
		if err := setOutOfServiceTaint(ctx, w.client, node, true, metav1.NewTime(r.now())); err != nil {
			if apierrors.IsConflict(err) {
				return ctrl.Result{RequeueAfter: soon}, nil
			}
			return ctrl.Result{}, err
		}
		r.Recorder.Eventf(rem, s.host, corev1.EventTypeNormal, "NodeTainted", "TaintNode", "tainted Node %s %s while its host is off", node.Name, corev1.TaintNodeOutOfService)
		progressing(rem, metav1.ConditionTrue, infrav1.RemediationDrainingNodeReason, fmt.Sprintf(
			"Node %s tainted %s; waiting for its pods and volumes to go", node.Name, corev1.TaintNodeOutOfService))
		// Kubernetes needs a moment to start deleting the pods: checked right away, none would be
		// terminating yet and the Node would look drained.
		return ctrl.Result{RequeueAfter: soon}, nil
	}
	blocker, err := drainBlocker(ctx, w.client, node.Name)
	if err != nil {
		progressing(rem, metav1.ConditionFalse, infrav1.RemediationWorkloadClusterUnreachableReason, fmt.Sprintf(
			"the host is off and Node %s tainted; %v", node.Name, err))
		return ctrl.Result{RequeueAfter: r.Recheck}, nil
	}
	if blocker != "" {
		progressing(rem, metav1.ConditionTrue, infrav1.RemediationDrainingNodeReason, fmt.Sprintf(
			"Node %s is tainted %s; waiting for %s to go before BareMetalHost %s is powered on", node.Name, corev1.TaintNodeOutOfService, blocker, s.host.Name))
		return ctrl.Result{RequeueAfter: r.Recheck}, nil
	}
	rem.Status.Phase = infrav1.PhaseWaiting
	return ctrl.Result{RequeueAfter: soon}, nil
}

// untaint removes the out-of-service taint from the Node of a host that is on again. It does
// so whatever the mode: a Node tainted before the manager restarted with another mode must not
// stay out of service. A zero result means go on.
func (r *Reconciler) untaint(ctx context.Context, s *state, w *workloadNode) (ctrl.Result, error) {
	if !hasOutOfServiceTaint(w.node) {
		return ctrl.Result{}, nil
	}
	if err := setOutOfServiceTaint(ctx, w.client, w.node, false, metav1.NewTime(r.now())); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: soon}, nil
		}
		return ctrl.Result{}, err
	}
	r.Recorder.Eventf(s.rem, s.host, corev1.EventTypeNormal, "NodeUntainted", "UntaintNode", "removed %s from Node %s: its host is on again", corev1.TaintNodeOutOfService, w.node.Name)
	return ctrl.Result{}, nil
}

// nodeVerb says what the mode does to the Node, for messages.
func (r *Reconciler) nodeVerb() string {
	if r.outOfServiceTaint {
		return "tainting"
	}
	return "deleting"
}
