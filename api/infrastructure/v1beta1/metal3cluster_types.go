package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Metal3ClusterSpec is CAPM3 v1beta1's Metal3Cluster spec.
type Metal3ClusterSpec struct {
	// controlPlaneEndpoint is the workload cluster's API server.
	// +optional
	ControlPlaneEndpoint APIEndpoint `json:"controlPlaneEndpoint,omitempty"`

	// noCloudProvider is the deprecated inverse of cloudProviderEnabled.
	// +optional
	NoCloudProvider *bool `json:"noCloudProvider,omitempty"`

	// cloudProviderEnabled says whether the nodes get a provider ID from a cloud provider.
	// +optional
	CloudProviderEnabled *bool `json:"cloudProviderEnabled,omitempty"`

	// failureDomains the machines may be spread over, by name.
	// +optional
	FailureDomains FailureDomains `json:"failureDomains,omitzero"`
}

// Metal3ClusterStatus is CAPM3 v1beta1's Metal3Cluster status.
type Metal3ClusterStatus struct {
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`
	// ready is v1beta2's status.initialization.provisioned.
	// +optional
	Ready bool `json:"ready"`
	// conditions in Cluster API's v1beta1 shape.
	// +optional
	Conditions Conditions `json:"conditions,omitzero"`
	// v1beta2 holds the conditions of the v1beta2 contract (v1beta2's status.conditions).
	// +optional
	V1Beta2 *Metal3ClusterV1Beta2Status `json:"v1beta2,omitempty"`
	// +optional
	FailureDomains FailureDomains `json:"failureDomains,omitzero"`
}

// Metal3ClusterV1Beta2Status holds the v1beta2 contract's conditions.
type Metal3ClusterV1Beta2Status struct {
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitzero"`
}

// Metal3Cluster is CAPM3's v1beta1 Metal3Cluster, served by conversion to v1beta2.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3clusters,scope=Namespaced,categories=cluster-api,shortName=m3c;m3cluster;m3clusters;metal3c;metal3cluster
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels.cluster\\.x-k8s\\.io/cluster-name",description="Cluster this Metal3Cluster belongs to"
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready",description="Infrastructure is provisioned"
// +kubebuilder:printcolumn:name="Endpoint",type="string",JSONPath=".spec.controlPlaneEndpoint.host",description="Control plane endpoint host"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"
type Metal3Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   Metal3ClusterSpec   `json:"spec,omitempty,omitzero"`
	Status Metal3ClusterStatus `json:"status,omitempty,omitzero"`
}

// Metal3ClusterList is a list of Metal3Clusters.
//
// +kubebuilder:object:root=true
type Metal3ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3Cluster `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Metal3Cluster{}, &Metal3ClusterList{})
}
