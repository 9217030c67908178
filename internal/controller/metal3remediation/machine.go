package metal3remediation

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	v1beta1conditions "sigs.k8s.io/cluster-api/util/conditions/deprecated/v1beta1"
	"sigs.k8s.io/cluster-api/util/patch"
)

// handMachineToOwner sets the Machine's OwnerRemediated condition to False: the Machine's owner
// (MachineSet, KubeadmControlPlane) then deletes it and creates a new one, as for a Machine
// Cluster API remediates itself. Both the v1beta2 condition, which today's Cluster API reads,
// and the deprecated v1beta1 one, which upstream sets, are written.
func (r *Reconciler) handMachineToOwner(ctx context.Context, machine *clusterv1.Machine, why string) error {
	helper, err := patch.NewHelper(machine, r.Client)
	if err != nil {
		return err
	}
	conditions.Set(machine, metav1.Condition{
		Type:    clusterv1.MachineOwnerRemediatedCondition,
		Status:  metav1.ConditionFalse,
		Reason:  clusterv1.MachineOwnerRemediatedWaitingForRemediationReason,
		Message: why,
	})
	v1beta1conditions.MarkFalse(machine, clusterv1.MachineOwnerRemediatedV1Beta1Condition,
		clusterv1.WaitingForRemediationV1Beta1Reason, clusterv1.ConditionSeverityWarning, "%s", why)
	if err := helper.Patch(ctx, machine, patch.WithOwnedConditions{Conditions: []string{clusterv1.MachineOwnerRemediatedCondition}},
		//nolint:staticcheck // the v1beta1 condition is deprecated, and still what CAPM3 writes
		patch.WithOwnedV1Beta1Conditions{Conditions: []clusterv1.ConditionType{clusterv1.MachineOwnerRemediatedV1Beta1Condition}}); err != nil {
		return fmt.Errorf("setting condition OwnerRemediated on Machine %s: %w", machine.Name, err)
	}
	return nil
}
