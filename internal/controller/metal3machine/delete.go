package metal3machine

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// reconcileDelete deprovisions the host, waits for BMO to wipe it, releases it, releases the
// machine's data claim, and only then lets the Metal3Machine go.
func (r *Reconciler) reconcileDelete(ctx context.Context, m3m *infrav1.Metal3Machine) (ctrl.Result, error) {
	deleting := func(reason, message string) {
		setCondition(m3m, infrav1.Metal3MachineReadyCondition, metav1.ConditionFalse, reason, message)
	}
	deleting(infrav1.Metal3MachineDeletingReason, "deleting")
	r.waitWords.Forget(string(m3m.UID))

	host, err := r.hostToRelease(ctx, m3m)
	if err != nil {
		return ctrl.Result{}, err
	}
	if host != nil {
		desired := host.DeepCopy()
		deprovision(desired, r.FastTrack)
		unpause(desired) // BMO must run to deprovision
		waiting := deprovisioning(host)
		if !waiting {
			// The host is wiped: give its switch ports back (the fabric controller resets them to
			// the idle VLAN) before the claim, so that a crash in between leaves the host ours to
			// finish with.
			if err := r.setSelected(ctx, host, ""); err != nil {
				deleting(infrav1.Metal3MachineDeletingFailedReason, err.Error())
				return ctrl.Result{}, err
			}
			release(desired, r.FastTrack)
			if err := r.keepForReuse(ctx, m3m, desired); err != nil {
				deleting(infrav1.Metal3MachineDeletingFailedReason, err.Error())
				return ctrl.Result{}, err
			}
		}
		if !equality.Semantic.DeepEqual(host.Spec, desired.Spec) || !equality.Semantic.DeepEqual(host.ObjectMeta, desired.ObjectMeta) {
			if err := r.Client.Patch(ctx, desired, client.MergeFrom(host)); err != nil && !apierrors.IsNotFound(err) {
				deleting(infrav1.Metal3MachineDeletingFailedReason, fmt.Sprintf("releasing host %s: %v", host.Name, err))
				return ctrl.Result{}, err
			}
		}
		if waiting {
			msg := fmt.Sprintf("waiting for host %s to deprovision (state: %s)", host.Name, host.Status.Provisioning.State)
			if e := hostError(host); e != "" {
				msg = fmt.Sprintf("host %s is in error while deprovisioning: %s; fix the host, or remove its consumerRef by hand to give up on it", host.Name, e)
			}
			deleting(infrav1.Metal3MachineDeletingReason, msg)
			// The host's own updates wake this machine.
			return ctrl.Result{}, nil
		}
		r.Recorder.Eventf(m3m, host, corev1.EventTypeNormal, "ReleasedHost", "Delete", "released BareMetalHost %s", host.Name)
	}

	if m3m.Spec.DataTemplate != nil && r.Data != nil {
		done, err := r.Data.Release(ctx, m3m)
		if err != nil {
			setCondition(m3m, infrav1.AssociateMetal3MachineMetaDataCondition, metav1.ConditionFalse, infrav1.DisassociateM3MetaDataFailedReason, err.Error())
			return ctrl.Result{}, err
		}
		if !done {
			deleting(infrav1.Metal3MachineDeletingReason, "waiting for the Metal3DataClaim to be deleted")
			return ctrl.Result{}, nil
		}
	}
	controllerutil.RemoveFinalizer(m3m, infrav1.MachineFinalizer)
	return ctrl.Result{}, nil
}

// hostToRelease finds the machine's host: the one its annotation names, or, when the machine
// was deleted between claiming a host and recording it, the one whose consumerRef names it. A
// host claimed by someone else is not ours to touch.
func (r *Reconciler) hostToRelease(ctx context.Context, m3m *infrav1.Metal3Machine) (*bmov1.BareMetalHost, error) {
	if ann := m3m.Annotations[infrav1.HostAnnotation]; ann != "" {
		if key, err := parseHostAnnotation(ann, m3m.Namespace); err == nil {
			host := &bmov1.BareMetalHost{}
			if err := r.Client.Get(ctx, key, host); err != nil {
				return nil, client.IgnoreNotFound(err)
			}
			if consumedBy(host, m3m) {
				return host, nil
			}
		}
	}
	hosts := &bmov1.BareMetalHostList{}
	if err := r.Client.List(ctx, hosts, client.InNamespace(m3m.Namespace),
		client.MatchingFields{hostConsumerIndex: metal3MachineKind + "/" + m3m.Name}); err != nil {
		return nil, err
	}
	for i := range hosts.Items {
		if consumedBy(&hosts.Items[i], m3m) {
			return &hosts.Items[i], nil
		}
	}
	return nil, nil
}
