package metal3dataclaim

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// Report fills the claim's status from its Metal3Data's outcome, CAPM3's fields as upstream has
// them: renderedData names the Metal3Data, errorMessage carries the data's error, and Ready says
// rendered, failed (with the error) or waiting. A wait is told without details (the Metal3Data's
// conditions have them): they change as the rendering progresses, and each change would be a
// write of the claim. The Metal3Data controller calls it where the data is rendered, so that no
// controller relays the outcome.
func Report(claim *infrav1.Metal3DataClaim, data *infrav1.Metal3Data) {
	claim.Status.RenderedData = &corev1.ObjectReference{
		APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3Data", Name: data.Name, Namespace: data.Namespace, UID: data.UID,
	}
	switch {
	case data.Status.Ready:
		claim.Status.ErrorMessage = nil
		setCondition(claim, metav1.ConditionTrue, infrav1.DataClaimDataReadyReason, "")
	case data.Status.ErrorMessage != nil:
		fail(claim, infrav1.DataClaimWaitingForDataReason, fmt.Sprintf("Metal3Data %s: %s", data.Name, *data.Status.ErrorMessage))
	default:
		waitWith(claim, infrav1.DataClaimWaitingForDataReason,
			fmt.Sprintf("waiting for Metal3Data %s to be rendered; its conditions say what it waits for", data.Name))
	}
}

// Ours says whether data serves claim: a Metal3Data of an earlier claim of the same name
// (deleted, then re-created) is on its way out.
func Ours(claim *infrav1.Metal3DataClaim, data *infrav1.Metal3Data) bool {
	owner := metav1.GetControllerOf(data)
	return owner == nil || owner.UID == claim.UID
}

func setCondition(claim *infrav1.Metal3DataClaim, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&claim.Status.Conditions, metav1.Condition{
		Type: infrav1.DataClaimReadyCondition, Status: status, Reason: reason, Message: message, ObservedGeneration: claim.Generation,
	})
}

func waitWith(claim *infrav1.Metal3DataClaim, reason, message string) {
	claim.Status.ErrorMessage = nil
	setCondition(claim, metav1.ConditionFalse, reason, message)
}

func fail(claim *infrav1.Metal3DataClaim, reason, message string) {
	claim.Status.ErrorMessage = &message
	setCondition(claim, metav1.ConditionFalse, reason, message)
}
