package metal3cluster

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
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

// readyCondition summarises the infrastructure condition for Cluster API's Ready.
func readyCondition(infra metav1.Condition, deleting bool) metav1.Condition {
	switch {
	case deleting:
		return metav1.Condition{Type: infrav1.Metal3ClusterReadyCondition, Status: metav1.ConditionFalse,
			Reason: infrav1.Metal3ClusterDeletingReason, Message: "the Metal3Cluster is being deleted"}
	case infra.Status == metav1.ConditionTrue:
		return metav1.Condition{Type: infrav1.Metal3ClusterReadyCondition, Status: metav1.ConditionTrue,
			Reason: infrav1.Metal3ClusterReadyReason}
	default:
		return metav1.Condition{Type: infrav1.Metal3ClusterReadyCondition, Status: metav1.ConditionFalse,
			Reason: infrav1.Metal3ClusterNotReadyReason, Message: infra.Message}
	}
}
