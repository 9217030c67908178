package metal3machine

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// WaitingForWorkloadClusterReason: Cluster API's ClusterCache has no connection to the workload
// cluster yet (infrastructure not provisioned, no <cluster>-kubeconfig Secret, or its API server
// does not answer).
const WaitingForWorkloadClusterReason = "WaitingForWorkloadCluster"

// workloadClient returns the ClusterCache's client of the cluster: one connection and one cache
// per workload cluster, shared by every reconcile, rather than a client built per reconcile.
func (r *Reconciler) workloadClient(ctx context.Context, key client.ObjectKey) (client.Client, error) {
	if r.ClusterCache == nil {
		return nil, errors.New("the manager has no ClusterCache to reach workload clusters with")
	}
	return r.ClusterCache.GetClient(ctx, key)
}

// workloadUnreachable sets the condition that says why the workload cluster cannot be reached and
// returns the result to come back with: a connection the ClusterCache has not (yet) made is a
// wait, not an error (its connect event wakes the machine anyway); anything else a failure.
func (r *Reconciler) workloadUnreachable(m3m *infrav1.Metal3Machine, cluster *clusterv1.Cluster, err error) ctrl.Result {
	if errors.Is(err, clustercache.ErrClusterNotConnected) {
		setCondition(m3m, infrav1.KubernetesNodeReadyCondition, metav1.ConditionFalse, WaitingForWorkloadClusterReason,
			fmt.Sprintf("waiting for a connection to workload cluster %s: Cluster API's ClusterCache connects once the Cluster's infrastructure is provisioned, through Secret %s-kubeconfig, and the cluster's API server answers",
				cluster.Name, cluster.Name))
		return ctrl.Result{RequeueAfter: r.NodeRecheck}
	}
	setCondition(m3m, infrav1.KubernetesNodeReadyCondition, metav1.ConditionFalse, infrav1.SettingProviderIDOnNodeFailedReason,
		fmt.Sprintf("reaching workload cluster %s: %v", cluster.Name, err))
	return ctrl.Result{RequeueAfter: r.NodeRecheck}
}
