package metal3machine

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// NodeUUIDLabel on a workload Node holds the UID of the BareMetalHost it runs on; the bootstrap
// configuration sets it (from the host's metadata), and metalwire finds the Node by it.
const NodeUUIDLabel = "metal3.io/uuid"

// setNodeProviderID sets spec.providerID on the workload cluster's Node when the Metal3Cluster
// says no cloud provider runs there: without it Cluster API cannot match the Node to the Machine.
func (r *Reconciler) setNodeProviderID(ctx context.Context, m3m *infrav1.Metal3Machine, cluster *clusterv1.Cluster, host *bmov1.BareMetalHost) (ctrl.Result, error) {
	if conditions.IsTrue(m3m, infrav1.KubernetesNodeReadyCondition) {
		return ctrl.Result{}, nil
	}
	enabled, err := r.cloudProviderEnabled(ctx, cluster)
	if err != nil || enabled {
		return ctrl.Result{}, err
	}
	failed := func(reason, format string, args ...any) {
		setCondition(m3m, infrav1.KubernetesNodeReadyCondition, metav1.ConditionFalse, reason, fmt.Sprintf(format, args...))
	}

	workload, err := r.workloadClient(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: cluster.Name})
	if err != nil {
		return r.workloadUnreachable(m3m, cluster, err), nil
	}
	nodes := &corev1.NodeList{}
	if err := workload.List(ctx, nodes, client.MatchingLabels{NodeUUIDLabel: string(host.UID)}); err != nil {
		failed(infrav1.SettingProviderIDOnNodeFailedReason, "listing Nodes of the workload cluster: %v", err)
		return ctrl.Result{RequeueAfter: r.NodeRecheck}, nil
	}
	switch len(nodes.Items) {
	case 0:
		failed(WaitingForNodeReason, "waiting for a Node labelled %s=%s (host %s) in the workload cluster", NodeUUIDLabel, host.UID, host.Name)
		return ctrl.Result{RequeueAfter: r.NodeRecheck}, nil
	case 1:
	default:
		failed(infrav1.SettingProviderIDOnNodeFailedReason, "%d Nodes are labelled %s=%s, the label must be unique; remove it from all but the Node of host %s",
			len(nodes.Items), NodeUUIDLabel, host.UID, host.Name)
		return ctrl.Result{RequeueAfter: r.NodeRecheck}, nil
	}

	node := &nodes.Items[0]
	switch node.Spec.ProviderID {
	case m3m.Spec.ProviderID:
	case "":
		orig := node.DeepCopy()
		node.Spec.ProviderID = m3m.Spec.ProviderID
		if err := workload.Patch(ctx, node, client.MergeFrom(orig)); err != nil {
			failed(infrav1.SettingProviderIDOnNodeFailedReason, "setting spec.providerID on Node %s: %v", node.Name, err)
			return ctrl.Result{}, err
		}
		r.Recorder.Eventf(m3m, nil, corev1.EventTypeNormal, ProviderIDSetOnNodeReason, "SetProviderID", "set spec.providerID of Node %s to %s", node.Name, m3m.Spec.ProviderID)
	default:
		// providerID is immutable once set; only a person can sort this out.
		failed(infrav1.SettingProviderIDOnNodeFailedReason, "Node %s has spec.providerID %s, not %s; is a cloud provider running after all? then set cloudProviderEnabled: true on the Metal3Cluster",
			node.Name, node.Spec.ProviderID, m3m.Spec.ProviderID)
		return ctrl.Result{}, nil
	}
	setCondition(m3m, infrav1.KubernetesNodeReadyCondition, metav1.ConditionTrue, ProviderIDSetOnNodeReason, "")
	return ctrl.Result{}, nil
}

// cloudProviderEnabled reads the setting from the cluster's Metal3Cluster. Unset, it is false, as
// upstream: the controller sets the Nodes' providerID. A Cluster whose infrastructure is not a
// Metal3Cluster is another provider's, and its Nodes are left alone.
func (r *Reconciler) cloudProviderEnabled(ctx context.Context, cluster *clusterv1.Cluster) (bool, error) {
	ref := cluster.Spec.InfrastructureRef
	if ref.Kind != "Metal3Cluster" || ref.Name == "" {
		return true, nil
	}
	m3c := &infrav1.Metal3Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: ref.Name}, m3c); err != nil {
		if apierrors.IsNotFound(err) {
			return (&infrav1.Metal3Cluster{}).CloudProviderEnabled(), nil
		}
		return true, err
	}
	return m3c.CloudProviderEnabled(), nil
}
