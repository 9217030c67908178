package skeleton

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ClusterOfOwnerMachine is a Kind's Cluster for objects a Machine owns (Metal3Machine,
// Metal3Remediation): the owning Machine, put in *machine, and its Cluster. Without an owning
// Machine yet, or when the Machine names no Cluster or it is gone, the Cluster is nil: a
// missing Cluster is the phases' to report, and deletion does not need it.
func ClusterOfOwnerMachine(ctx context.Context, c client.Client, kind string, obj metav1.ObjectMeta, machine **clusterv1.Machine) (*clusterv1.Cluster, error) {
	m, err := util.GetOwnerMachine(ctx, c, obj)
	if err != nil {
		return nil, fmt.Errorf("reading the Machine that owns %s %s: %w", kind, obj.Name, err)
	}
	*machine = m
	if m == nil {
		return nil, nil
	}
	cluster, err := util.GetClusterFromMetadata(ctx, c, m.ObjectMeta)
	if err != nil && !errors.Is(err, util.ErrNoCluster) && !apierrors.IsNotFound(err) {
		return nil, err
	}
	return cluster, nil
}
