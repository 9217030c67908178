package metal3remediation

import (
	"context"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// TestAnUnreadableBackupIsTerminal: a backup annotation someone edited into something that is
// not a JSON object of strings cannot be restored by any retry. The remediation says which
// annotation and what to do, and the error is terminal (controller-runtime does not requeue it);
// the Node is not touched.
func TestAnUnreadableBackupIsTerminal(t *testing.T) {
	for _, key := range []string{nodeAnnotationsBackup, nodeLabelsBackup} {
		t.Run(key, func(t *testing.T) {
			g := NewWithT(t)
			rem := &infrav1.Metal3Remediation{ObjectMeta: metav1.ObjectMeta{Name: "rem-1", Annotations: map[string]string{
				nodeAnnotationsBackup: `{"a":"b"}`, nodeLabelsBackup: `{"c":"d"}`,
			}}}
			rem.Annotations[key] = `{"a": 1`
			err := restoreNode(context.Background(), &workloadNode{}, rem)
			g.Expect(errors.Is(err, reconcile.TerminalError(nil))).To(BeTrue(), "got %v", err)
			c := conditions.Get(rem, infrav1.RemediationProgressingCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(NodeBackupInvalidReason))
			g.Expect(c.Message).To(And(ContainSubstring("annotation "+key+" of Metal3Remediation rem-1"), ContainSubstring("remove it to restore nothing")))
		})
	}
}
