package metal3data

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/poolanswer"
	"github.com/metalwire/metalwire/pkg/render"
)

// reconcileNormal claims addresses, renders and writes the Secrets — once. A rendered
// Metal3Data only has its Secrets re-created if someone deleted them.
func (r *Reconciler) reconcileNormal(ctx context.Context, data *infrav1.Metal3Data) (ctrl.Result, error) {
	if data.Status.Ready {
		if err := r.recheckHostSwitch(ctx, data); err != nil {
			return ctrl.Result{}, err
		}
		return r.recreateSecrets(ctx, data)
	}

	in, block, err := r.gather(ctx, data)
	if err != nil {
		return ctrl.Result{}, err
	}
	if block != nil {
		r.notReady(data, block)
		return ctrl.Result{}, nil
	}
	facts := in.facts(data)
	pools, err := templatePools(in.template, facts)
	if err != nil {
		r.notReady(data, renderBlocker(err))
		return ctrl.Result{}, nil
	}
	answers, err := r.claimAddresses(ctx, data, in, pools)
	if err != nil {
		r.notReady(data, failWith(infrav1.DataWaitingForIPAddressesReason, "%v", err))
		return ctrl.Result{}, err
	}
	state, message := poolanswer.Summary(answers)
	switch state {
	case poolanswer.Exhausted:
		setCondition(data, infrav1.DataIPAddressesReadyCondition, metav1.ConditionFalse, infrav1.DataPoolExhaustedReason, message)
		r.notReady(data, failWith(infrav1.DataPoolExhaustedReason, "%s", message))
		return ctrl.Result{}, nil
	case poolanswer.Waiting:
		setCondition(data, infrav1.DataIPAddressesReadyCondition, metav1.ConditionFalse, infrav1.DataWaitingForIPAddressesReason, message)
		r.notReady(data, waitFor(infrav1.DataWaitingForIPAddressesReason, "%s", message))
		if poolanswer.AnyNotSeen(answers) {
			return ctrl.Result{RequeueAfter: notSeenRecheck}, nil
		}
		return ctrl.Result{}, nil
	}
	setCondition(data, infrav1.DataIPAddressesReadyCondition, metav1.ConditionTrue, infrav1.DataRenderedReason, "")
	facts.Pools = poolanswer.Addresses(answers)

	out, err := renderOutput(in.template, facts)
	if err != nil {
		r.notReady(data, renderBlocker(err))
		return ctrl.Result{}, nil
	}
	m3m := in.m3m.Name
	if err := r.writeSecrets(ctx, data, secrets(data, m3m, in.clusterName(), out)); err != nil {
		r.notReady(data, failWith(infrav1.DataSecretWriteFailedReason, "%v", err))
		return ctrl.Result{}, err
	}
	r.rendered(data, m3m, out)
	if err := r.checkHostSwitch(ctx, data, in.host.Namespace, in.host.Name, out.networkData); err != nil {
		return ctrl.Result{}, err
	}
	ctrl.LoggerFrom(ctx).Info("rendered", "host", in.host.Name, "metal3machine", m3m, "index", ptr.Deref(data.Spec.Index, 0))
	return ctrl.Result{}, nil
}

// rendered records success: the Secret references (named at creation by the template
// controller, so normally unchanged) and SecretsReady, from which Ready is summarised.
func (r *Reconciler) rendered(data *infrav1.Metal3Data, m3m string, out output) {
	mdName, ndName := infrav1.DataSecretNames(data, m3m)
	data.Spec.MetaData, data.Spec.NetworkData = nil, nil
	if out.metaData != nil {
		data.Spec.MetaData = &corev1.SecretReference{Name: mdName, Namespace: data.Namespace}
	}
	if out.networkData != nil {
		data.Spec.NetworkData = &corev1.SecretReference{Name: ndName, Namespace: data.Namespace}
	}
	data.Status.Ready = true
	data.Status.ErrorMessage = nil
	setCondition(data, infrav1.DataSecretsReadyCondition, metav1.ConditionTrue, infrav1.DataRenderedReason, "")
}

// notReady reports why the Metal3Data is not rendered. Errors a person must act on also go to
// status.errorMessage, which the claim and `kubectl get` show.
func (r *Reconciler) notReady(data *infrav1.Metal3Data, b *blocker) {
	data.Status.Ready = false
	data.Status.ErrorMessage = nil
	if b.isError {
		msg := b.message
		data.Status.ErrorMessage = &msg
	}
	if b.reason != infrav1.DataWaitingForIPAddressesReason && b.reason != infrav1.DataPoolExhaustedReason {
		// The addresses were not looked at: say so rather than leave an old answer standing.
		if c := meta.FindStatusCondition(data.Status.Conditions, infrav1.DataIPAddressesReadyCondition); c == nil || c.Status != metav1.ConditionTrue {
			setCondition(data, infrav1.DataIPAddressesReadyCondition, metav1.ConditionFalse, b.reason, "addresses are claimed once this is resolved: "+b.message)
		}
	}
	setCondition(data, infrav1.DataSecretsReadyCondition, metav1.ConditionFalse, b.reason, b.message)
}

// renderBlocker turns a rendering error into a blocker. A host not yet inspected is a wait; a
// template that does not fit the host (a NIC it lacks, a malformed MAC) is an error, retried
// whenever the host or the template changes.
func renderBlocker(err error) *blocker {
	if render.IsRetryable(err) {
		return waitFor(infrav1.DataWaitingForHostReason, "%v", err)
	}
	return failWith(infrav1.DataRenderFailedReason, "%v", err)
}

// recreateSecrets puts back a deleted Secret of a rendered Metal3Data. It renders again from
// the same inputs and writes the result only if its digest is the one the surviving Secret
// records (RenderedHashAnnotation); otherwise it says which input changed rather than hand the
// host a different configuration. With both Secrets deleted no record is left, and they are
// written from the inputs as they are. A Secret it could not re-create that someone restored
// clears the error at the next reconcile.
func (r *Reconciler) recreateSecrets(ctx context.Context, data *infrav1.Metal3Data) (ctrl.Result, error) {
	missing, digest, err := r.missingSecrets(ctx, data)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(missing) == 0 {
		if data.Status.ErrorMessage != nil {
			// A Secret this controller could not re-create is back: restored by other hands.
			data.Status.ErrorMessage = nil
			setCondition(data, infrav1.DataSecretsReadyCondition, metav1.ConditionTrue, infrav1.DataRenderedReason, "")
		}
		return ctrl.Result{}, nil
	}
	if legacy := data.Annotations[RenderedHashAnnotation]; legacy != "" {
		digest = legacy
	}
	which := strings.Join(missing, ", ")
	fail := func(format string, args ...any) (ctrl.Result, error) {
		msg := fmt.Sprintf("Secret %s was deleted and cannot be re-created: ", which) + fmt.Sprintf(format, args...)
		data.Status.ErrorMessage = &msg
		setCondition(data, infrav1.DataSecretsReadyCondition, metav1.ConditionFalse, infrav1.DataSecretWriteFailedReason, msg)
		return ctrl.Result{}, nil
	}
	in, block, err := r.gather(ctx, data)
	if err != nil {
		return ctrl.Result{}, err
	}
	if block != nil {
		return fail("%s", block.message)
	}
	facts := in.facts(data)
	pools, err := templatePools(in.template, facts)
	if err != nil {
		return fail("%v", err)
	}
	answers, err := r.claimAddresses(ctx, data, in, pools)
	if err != nil {
		return ctrl.Result{}, err
	}
	if state, message := poolanswer.Summary(answers); state != poolanswer.Ready {
		return fail("%s", message)
	}
	facts.Pools = poolanswer.Addresses(answers)
	out, err := renderOutput(in.template, facts)
	if err != nil {
		return fail("%v", err)
	}
	if digest != "" && out.hash() != digest {
		return fail("rendering again gives different content than was first written (the host's labels, annotations or NICs changed); " +
			"restore them, or delete the Metal3DataClaim's machine to roll the node")
	}
	if err := r.writeSecrets(ctx, data, secrets(data, in.m3m.Name, in.clusterName(), out)); err != nil {
		return fail("%v", err)
	}
	data.Status.ErrorMessage = nil
	setCondition(data, infrav1.DataSecretsReadyCondition, metav1.ConditionTrue, infrav1.DataRenderedReason, "")
	ctrl.LoggerFrom(ctx).Info("re-created deleted Secrets", "secrets", which)
	return ctrl.Result{}, nil
}
