package metal3cluster

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/skeleton"
)

// endpointCondition judges spec.controlPlaneEndpoint. Admission already refuses most bad
// endpoints; this catches objects stored before the rules existed, or written by older tools.
func endpointCondition(ep infrav1.APIEndpoint) metav1.Condition {
	if ep.IsValid() {
		return metav1.Condition{
			Type:   infrav1.BaremetalInfrastructureReadyCondition,
			Status: metav1.ConditionTrue,
			Reason: infrav1.Metal3ClusterReadyReason,
		}
	}
	var msg string
	switch {
	case ep.Host == "" && ep.Port == 0:
		msg = "spec.controlPlaneEndpoint: not set; set host and port of the workload cluster's API server, such as {host: 192.168.111.249, port: 6443}"
	case ep.Host == "":
		msg = "spec.controlPlaneEndpoint.host: not set; set the IP address or DNS name of the workload cluster's API server"
	default:
		msg = fmt.Sprintf("spec.controlPlaneEndpoint.port: not set for host %s; set the API server's port, such as 6443", ep.Host)
	}
	return metav1.Condition{
		Type:    infrav1.BaremetalInfrastructureReadyCondition,
		Status:  metav1.ConditionFalse,
		Reason:  infrav1.ControlPlaneEndpointFailedReason,
		Message: msg,
	}
}

// OwnedByClusterCondition says whether a Cluster owns the Metal3Cluster: Cluster API sets the
// owner reference once a Cluster's spec.infrastructureRef names it.
const OwnedByClusterCondition = "OwnedByCluster"

// Reasons of OwnedByClusterCondition.
const (
	// OwnerClusterSetReason: a Cluster owns the Metal3Cluster.
	OwnerClusterSetReason = "OwnerClusterSet"
	// WaitingForOwnerClusterReason: no Cluster names this Metal3Cluster in its infrastructureRef
	// yet, so Cluster API has not set the owner reference.
	WaitingForOwnerClusterReason = "WaitingForOwnerCluster"
)

// ownerCondition says whether a Cluster owns the Metal3Cluster.
func ownerCondition(owned bool) metav1.Condition {
	if owned {
		return metav1.Condition{Type: OwnedByClusterCondition, Status: metav1.ConditionTrue, Reason: OwnerClusterSetReason}
	}
	return metav1.Condition{Type: OwnedByClusterCondition, Status: metav1.ConditionFalse, Reason: WaitingForOwnerClusterReason,
		Message: "waiting for Cluster API to make a Cluster own this Metal3Cluster; check that a Cluster's spec.infrastructureRef names it"}
}

// readySummary: Ready says first whether a Cluster owns the Metal3Cluster, then whether its
// endpoint is usable (as upstream's, from BaremetalInfrastructureReady, with reason NotReady).
var readySummary = skeleton.Ready[*infrav1.Metal3Cluster]{
	Condition:  infrav1.Metal3ClusterReadyCondition,
	From:       []string{OwnedByClusterCondition, infrav1.BaremetalInfrastructureReadyCondition},
	TrueReason: infrav1.Metal3ClusterReadyReason,
	Reasons:    map[string]string{infrav1.BaremetalInfrastructureReadyCondition: infrav1.Metal3ClusterNotReadyReason},
}

// deletingCondition is Ready while the Metal3Cluster waits to go: message says for what.
func deletingCondition(message string) metav1.Condition {
	return metav1.Condition{Type: infrav1.Metal3ClusterReadyCondition, Status: metav1.ConditionFalse,
		Reason: infrav1.Metal3ClusterDeletingReason, Message: message}
}
