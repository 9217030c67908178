package metal3machine

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/skeleton"
)

// BareMetalHostProvisionedCondition says whether the claimed host runs the machine's image and,
// until it does, what it waits for. Upstream's Ready is True once the host is provisioned; this
// condition carries that part of Ready.
const BareMetalHostProvisionedCondition = "BareMetalHostProvisioned"

// Reasons this package adds to upstream's, for states upstream folds into a generic failure.
const (
	// HostErrorReason: the claimed host is in error; the message carries BMO's error.
	HostErrorReason = "BareMetalHostError"
	// HostProvisioningReason: the claimed host is not provisioned yet.
	HostProvisioningReason = "WaitingForBareMetalHostProvisioned"
	// HostClaimedElsewhereReason: the host named by the machine's annotation is claimed by another.
	HostClaimedElsewhereReason = "BareMetalHostClaimedByOther"
	// WaitingForNodeReason: no workload Node carries the host's metal3.io/uuid label yet.
	WaitingForNodeReason = "WaitingForNode"
	// ProviderIDSetOnNodeReason: the workload Node carries the machine's providerID.
	ProviderIDSetOnNodeReason = "ProviderIDSetOnNode"
)

// addresses are what Cluster API copies to the Machine: the host's inspected NIC addresses and
// its hostname, as upstream reports them.
func addresses(host *bmov1.BareMetalHost) clusterv1.MachineAddresses {
	hw := host.Status.HardwareDetails
	if hw == nil {
		return nil
	}
	var out clusterv1.MachineAddresses
	for _, nic := range hw.NIC {
		if nic.IP != "" {
			out = append(out, clusterv1.MachineAddress{Type: clusterv1.MachineInternalIP, Address: nic.IP})
		}
	}
	if hw.Hostname != "" {
		out = append(out,
			clusterv1.MachineAddress{Type: clusterv1.MachineHostName, Address: hw.Hostname},
			clusterv1.MachineAddress{Type: clusterv1.MachineInternalDNS, Address: hw.Hostname})
	}
	return out
}

// provisioned says whether the host runs the machine's image.
func provisioned(host *bmov1.BareMetalHost) bool {
	s := host.Status.Provisioning.State
	return s == bmov1.StateProvisioned || s == bmov1.StateExternallyProvisioned
}

// hostProvisionedCondition is the BareMetalHostProvisioned condition of a machine whose host is
// claimed; waitingFor says what the machine still needs before the host can be provisioned, if
// anything. Its reasons are those Ready shows: Ready is summarised from it (readySummary).
func hostProvisionedCondition(host *bmov1.BareMetalHost, waitingFor string) metav1.Condition {
	c := metav1.Condition{Type: BareMetalHostProvisionedCondition, Status: metav1.ConditionFalse}
	switch {
	case hostError(host) != "":
		c.Reason = HostErrorReason
		c.Message = fmt.Sprintf("host %s is in error: %s; fix the host (see kubectl describe bmh -n %s %s), BMO retries on its own",
			host.Name, hostError(host), host.Namespace, host.Name)
	case provisioned(host):
		c.Status = metav1.ConditionTrue
		c.Reason = infrav1.Metal3MachineReadyReason
	case waitingFor != "":
		c.Reason = infrav1.Metal3MachineNotReadyReason
		c.Message = fmt.Sprintf("host %s is claimed, not provisioned: %s", host.Name, waitingFor)
	default:
		state := string(host.Status.Provisioning.State)
		if state == "" {
			state = "unknown"
		}
		c.Reason = HostProvisioningReason
		c.Message = fmt.Sprintf("host %s is being provisioned (state: %s)", host.Name, state)
	}
	return c
}

// readySummary: Ready says first whether a host is claimed (AssociateBareMetalHost), then
// whether it is provisioned (BareMetalHostProvisioned), each with its own reason and message.
// The Node's providerID (KubernetesNodeReady) and the ports of a host already provisioned
// (SwitchPortsReady) are reported beside Ready, not in it.
var readySummary = skeleton.Ready[*infrav1.Metal3Machine]{
	Condition:  infrav1.Metal3MachineReadyCondition,
	From:       []string{infrav1.AssociateBareMetalHostCondition, BareMetalHostProvisionedCondition},
	TrueReason: infrav1.Metal3MachineReadyReason,
}

// trimStatus keeps Cluster API's Paused condition from costing a write of its own (before is
// the machine as read): saying "not paused" for the first time rides on the next status change.
func trimStatus(before, m3m *infrav1.Metal3Machine) {
	p := conditions.Get(m3m, clusterv1.PausedCondition)
	if p == nil || p.Status != metav1.ConditionFalse || conditions.Get(before, clusterv1.PausedCondition) != nil {
		return
	}
	without := m3m.DeepCopy()
	conditions.Delete(without, clusterv1.PausedCondition)
	if equality.Semantic.DeepEqual(before.Status, without.Status) {
		conditions.Delete(m3m, clusterv1.PausedCondition)
	}
}

// patchMachine writes what a reconcile changed (before is the machine as read) in at most two
// requests: its metadata and spec, then its whole status, conditions included. This controller
// is the only writer of a Metal3Machine's status, so one merge patch of it loses nothing;
// Cluster API's patch helper writes the conditions in a request of their own, one write more
// for every machine of a scale-up. Conditions computed for the generation a spec change
// replaces describe the new one, and say so.
func (r *Reconciler) patchMachine(ctx context.Context, before, m3m *infrav1.Metal3Machine) error {
	trimStatus(before, m3m)
	status := m3m.Status.DeepCopy()
	if !equality.Semantic.DeepEqual(before.ObjectMeta, m3m.ObjectMeta) || !equality.Semantic.DeepEqual(before.Spec, m3m.Spec) {
		if err := r.Client.Patch(ctx, m3m, client.MergeFrom(before)); err != nil {
			if apierrors.IsNotFound(err) && len(m3m.Finalizers) == 0 {
				return nil // the last finalizer went: the machine is gone
			}
			return err
		}
		for i := range status.Conditions {
			if c := &status.Conditions[i]; c.ObservedGeneration == before.Generation {
				c.ObservedGeneration = m3m.Generation
			}
		}
	}
	if equality.Semantic.DeepEqual(before.Status, *status) {
		m3m.Status = *status
		return nil
	}
	base := m3m.DeepCopy()
	base.Status = before.Status
	m3m.Status = *status
	err := r.Client.Status().Patch(ctx, m3m, client.MergeFrom(base))
	if apierrors.IsNotFound(err) && len(m3m.Finalizers) == 0 {
		return nil
	}
	return err
}
