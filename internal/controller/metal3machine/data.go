package metal3machine

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/metal3dataclaim"
)

// DataTemplateClaimer is the seam to the Metal3DataTemplate -> Metal3DataClaim -> Metal3Data
// chain (metal3dataclaim.Claimer; a stand-in in tests). The machine reconciler calls it only for machines with
// spec.dataTemplate set.
type DataTemplateClaimer interface {
	// Claim makes sure the machine's Metal3DataClaim exists (named after the machine, owned by
	// it) and returns the rendered data once it is ready, or nil while it is not.
	Claim(ctx context.Context, m3m *infrav1.Metal3Machine) (*metal3dataclaim.Rendered, error)
	// Release deletes the machine's Metal3DataClaim and reports whether it is gone.
	Release(ctx context.Context, m3m *infrav1.Metal3Machine) (done bool, err error)
}

// userDataRef is the user data the host boots with: spec.userData, else the Machine's bootstrap
// data Secret. Nil means the bootstrap provider has not written it yet.
func userDataRef(m3m *infrav1.Metal3Machine, machine *clusterv1.Machine) *corev1.SecretReference {
	if ref := m3m.Spec.UserData; ref != nil && ref.Name != "" {
		return inNamespace(ref, m3m.Namespace)
	}
	if name := machine.Spec.Bootstrap.DataSecretName; name != nil && *name != "" {
		return &corev1.SecretReference{Name: *name, Namespace: m3m.Namespace}
	}
	return nil
}

func inNamespace(ref *corev1.SecretReference, namespace string) *corev1.SecretReference {
	if ref == nil {
		return nil
	}
	out := *ref
	if out.Namespace == "" {
		out.Namespace = namespace
	}
	return &out
}

// needsTemplate says whether the machine must wait for the template's output: a user-given
// Secret wins over the rendered one, so with both given the template cannot add anything.
func needsTemplate(m3m *infrav1.Metal3Machine) bool {
	return m3m.Spec.DataTemplate != nil && (m3m.Spec.MetaData == nil || m3m.Spec.NetworkData == nil)
}

// resolveData gathers meta and network data: the user's Secrets, else the template's output.
// ok is false while the machine must wait; the conditions set say for what.
//
// This is where the Metal3DataTemplate chain plugs in: with Data nil (no claimer wired into the
// manager) a machine with spec.dataTemplate waits, reporting so, and nothing is made up.
func (r *Reconciler) resolveData(ctx context.Context, m3m *infrav1.Metal3Machine) (meta, network *corev1.SecretReference, ok bool, err error) {
	meta = inNamespace(m3m.Spec.MetaData, m3m.Namespace)
	network = inNamespace(m3m.Spec.NetworkData, m3m.Namespace)

	if m3m.Spec.DataTemplate == nil {
		if meta != nil || network != nil {
			setCondition(m3m, infrav1.Metal3MachineDataReadyCondition, metav1.ConditionTrue, infrav1.SecretsSetExternallyReason, "")
		}
		return meta, network, true, nil
	}

	template := m3m.Spec.DataTemplate.Name
	if r.Data == nil {
		setCondition(m3m, infrav1.AssociateMetal3MachineMetaDataCondition, metav1.ConditionFalse, infrav1.AssociateMetal3MachineMetaDataFailedReason,
			fmt.Sprintf("spec.dataTemplate %s: this manager runs no Metal3DataTemplate controllers, so no Metal3DataClaim is made; the host stays unprovisioned", template))
		return withoutRendered(m3m, meta, network)
	}

	rendered, err := r.Data.Claim(ctx, m3m)
	if err != nil {
		setCondition(m3m, infrav1.AssociateMetal3MachineMetaDataCondition, metav1.ConditionFalse, infrav1.AssociateMetal3MachineMetaDataFailedReason,
			fmt.Sprintf("claiming data from Metal3DataTemplate %s: %v", template, err))
		return nil, nil, false, err
	}
	setCondition(m3m, infrav1.AssociateMetal3MachineMetaDataCondition, metav1.ConditionTrue, infrav1.AssociateMetal3MachineMetaDataSuccessReason, "")
	if rendered == nil {
		return withoutRendered(m3m, meta, network)
	}
	m3m.Status.RenderedData = rendered.Metal3Data
	r.showHostSwitch(m3m, rendered.HostSwitch)
	if meta == nil {
		meta = rendered.MetaData
	}
	if network == nil {
		network = rendered.NetworkData
	}
	setCondition(m3m, infrav1.Metal3MachineDataReadyCondition, metav1.ConditionTrue, infrav1.Metal3DataSecretsReadyReason, "")
	return meta, network, true, nil
}

// withoutRendered is resolveData while the template has rendered nothing for the machine: the
// user's Secrets when they need nothing of it, else a wait.
func withoutRendered(m3m *infrav1.Metal3Machine, meta, network *corev1.SecretReference) (*corev1.SecretReference, *corev1.SecretReference, bool, error) {
	if !needsTemplate(m3m) {
		setCondition(m3m, infrav1.Metal3MachineDataReadyCondition, metav1.ConditionTrue, infrav1.SecretsSetExternallyReason, "")
		return meta, network, true, nil
	}
	setCondition(m3m, infrav1.Metal3MachineDataReadyCondition, metav1.ConditionFalse, infrav1.WaitingForMetal3DataReason,
		fmt.Sprintf("waiting for rendered data from Metal3DataTemplate %s", m3m.Spec.DataTemplate.Name))
	return nil, nil, false, nil
}

// showHostSwitch puts the Metal3Data's HostSwitchMismatch condition on the machine, with an
// event on the machine when a mismatch is new (the Metal3Data has its own).
func (r *Reconciler) showHostSwitch(m3m *infrav1.Metal3Machine, c *metav1.Condition) {
	if c == nil {
		conditions.Delete(m3m, infrav1.DataHostSwitchMismatchCondition)
		return
	}
	old := conditions.Get(m3m, infrav1.DataHostSwitchMismatchCondition)
	if c.Status == metav1.ConditionTrue && r.Recorder != nil && (old == nil || old.Status != c.Status || old.Message != c.Message) {
		r.Recorder.Eventf(m3m, nil, corev1.EventTypeWarning, c.Reason, "CheckSwitchPorts",
			"the network data of this machine's host disagrees with its switch ports: see condition %s here or on Metal3Data %s", c.Type, m3m.Status.RenderedData.Name)
	}
	setCondition(m3m, infrav1.DataHostSwitchMismatchCondition, c.Status, c.Reason, c.Message)
}
