package metal3remediation

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// The Node's labels and annotations are kept on the remediation while the Node is deleted, and
// put back on the Node the kubelet registers after the reboot. CAPM3's keys, so that a
// remediation CAPM3 started restores its Node here.
const (
	nodeAnnotationsBackup = "remediation.metal3.io/node-annotations-backup"
	nodeLabelsBackup      = "remediation.metal3.io/node-labels-backup"
)

// workloadNode is the Machine's Node in the workload cluster: nil (no error) when the Machine
// has no nodeRef or the Node does not exist (any more).
type workloadNode struct {
	client client.Client
	node   *corev1.Node
}

// getNode reaches the workload cluster and reads the Machine's Node. A Machine without a
// nodeRef has no Node to look for, and the workload cluster is not asked (it may have none yet).
func (r *Reconciler) getNode(ctx context.Context, s *state) (*workloadNode, error) {
	if !s.machine.Status.NodeRef.IsDefined() {
		return &workloadNode{}, nil
	}
	if s.cluster == nil {
		return nil, fmt.Errorf("the Cluster of Machine %s does not exist", s.machine.Name)
	}
	if r.WorkloadClient == nil {
		return nil, fmt.Errorf("no way to reach workload clusters was configured")
	}
	c, err := r.WorkloadClient(ctx, client.ObjectKeyFromObject(s.cluster))
	if err != nil {
		return nil, err
	}
	w := &workloadNode{client: c}
	node := &corev1.Node{}
	if err := c.Get(ctx, client.ObjectKey{Name: s.machine.Status.NodeRef.Name}, node); err != nil {
		if apierrors.IsNotFound(err) {
			return w, nil
		}
		return nil, fmt.Errorf("reading Node %s of the workload cluster: %w", s.machine.Status.NodeRef.Name, err)
	}
	w.node = node
	return w, nil
}

// backupNode writes the Node's labels and annotations into the remediation's annotations. It
// reports whether they changed, in which case they must be saved before the Node is deleted.
func backupNode(rem *infrav1.Metal3Remediation, node *corev1.Node) (bool, error) {
	annotations, err := marshalMap(node.Annotations)
	if err != nil {
		return false, fmt.Errorf("keeping the annotations of Node %s: %w", node.Name, err)
	}
	labels, err := marshalMap(node.Labels)
	if err != nil {
		return false, fmt.Errorf("keeping the labels of Node %s: %w", node.Name, err)
	}
	if rem.Annotations[nodeAnnotationsBackup] == annotations && rem.Annotations[nodeLabelsBackup] == labels {
		return false, nil
	}
	if rem.Annotations == nil {
		rem.Annotations = map[string]string{}
	}
	rem.Annotations[nodeAnnotationsBackup] = annotations
	rem.Annotations[nodeLabelsBackup] = labels
	return true, nil
}

// NodeBackupInvalidReason: a backup annotation of the Node's labels or annotations is not the
// JSON object of strings it was written as (someone edited it). No retry can read it: the
// remediation says so and waits for the annotation to be fixed or removed.
const NodeBackupInvalidReason = "NodeBackupInvalid"

// restoreNode puts the kept labels and annotations back on the Node, without overwriting what
// the new Node already has (the kubelet's own labels are newer), and drops the backup. A backup
// that cannot be read is a terminal error, with the Progressing condition saying what to fix.
func restoreNode(ctx context.Context, w *workloadNode, rem *infrav1.Metal3Remediation) error {
	annotations, err := unmarshalMap(rem.Annotations[nodeAnnotationsBackup])
	if err != nil {
		return invalidBackup(rem, nodeAnnotationsBackup, err)
	}
	labels, err := unmarshalMap(rem.Annotations[nodeLabelsBackup])
	if err != nil {
		return invalidBackup(rem, nodeLabelsBackup, err)
	}
	node := w.node
	orig := node.DeepCopy()
	node.Annotations = addMissing(node.Annotations, annotations)
	node.Labels = addMissing(node.Labels, labels)
	if !maps.Equal(orig.Annotations, node.Annotations) || !maps.Equal(orig.Labels, node.Labels) {
		if err := w.client.Patch(ctx, node, client.MergeFrom(orig)); err != nil {
			return fmt.Errorf("restoring the labels and annotations of Node %s: %w", node.Name, err)
		}
	}
	delete(rem.Annotations, nodeAnnotationsBackup)
	delete(rem.Annotations, nodeLabelsBackup)
	return nil
}

func marshalMap(m map[string]string) (string, error) {
	if m == nil {
		return "", nil
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// invalidBackup says on the remediation that its backup annotation key cannot be read, and
// returns the terminal error.
func invalidBackup(rem *infrav1.Metal3Remediation, key string, err error) error {
	err = fmt.Errorf("annotation %s of Metal3Remediation %s: %w; correct it, or remove it to restore nothing", key, rem.Name, err)
	progressing(rem, metav1.ConditionFalse, NodeBackupInvalidReason, err.Error())
	return reconcile.TerminalError(err)
}

func unmarshalMap(s string) (map[string]string, error) {
	out := map[string]string{}
	if s == "" {
		return out, nil
	}
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, err
	}
	return out, nil
}

// addMissing adds to have the entries of kept whose keys it does not have.
func addMissing(have, kept map[string]string) map[string]string {
	if len(kept) == 0 {
		return have
	}
	if have == nil {
		have = map[string]string{}
	}
	for k, v := range kept {
		if _, ok := have[k]; !ok {
			have[k] = v
		}
	}
	return have
}
