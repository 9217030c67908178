package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// ClusterFinalizer lets the Metal3Cluster controller clean up before the Metal3Cluster goes.
// The name is upstream CAPM3's, so objects created by CAPM3 are handled the same way.
const ClusterFinalizer = "metal3cluster.infrastructure.cluster.x-k8s.io"

// Metal3Cluster condition types and reasons, named as upstream CAPM3 v1beta2 names them.
const (
	// Metal3ClusterReadyCondition summarises the Metal3Cluster's state for Cluster API.
	Metal3ClusterReadyCondition = clusterv1.ReadyCondition

	// BaremetalInfrastructureReadyCondition is true once the control plane endpoint is valid:
	// bare metal has no other cluster-wide infrastructure to set up.
	BaremetalInfrastructureReadyCondition = "BaremetalInfrastructureReady"

	// Metal3ClusterReadyReason: every readiness criterion is met.
	Metal3ClusterReadyReason = clusterv1.ReadyReason
	// Metal3ClusterNotReadyReason: at least one readiness criterion is not met.
	Metal3ClusterNotReadyReason = clusterv1.NotReadyReason
	// Metal3ClusterReadyUnknownReason: a readiness criterion is unknown and none is unmet.
	Metal3ClusterReadyUnknownReason = clusterv1.ReadyUnknownReason
	// ControlPlaneEndpointFailedReason: spec.controlPlaneEndpoint cannot be used.
	ControlPlaneEndpointFailedReason = "ControlPlaneEndpointFailed"
	// FailedToGetOwnerClusterReason: the owning Cluster could not be read.
	FailedToGetOwnerClusterReason = "FailedToGetOwnerCluster"
	// Metal3ClusterDeletingReason: the Metal3Cluster is being deleted.
	Metal3ClusterDeletingReason = clusterv1.DeletingReason
)

// Metal3ClusterSpec is the desired state of a Metal3Cluster.
// +kubebuilder:validation:XValidation:rule=`has(self.controlPlaneEndpoint)`,message=`must be set: host (and port, default 6443) of the workload cluster's API server, such as controlPlaneEndpoint: {host: 192.168.111.249, port: 6443}`,fieldPath=`.controlPlaneEndpoint`,reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule=`!(has(self.noCloudProvider) && has(self.cloudProviderEnabled) && self.noCloudProvider == self.cloudProviderEnabled)`,message=`contradicts cloudProviderEnabled; noCloudProvider is deprecated: delete it and keep only cloudProviderEnabled (noCloudProvider: true means cloudProviderEnabled: false)`,fieldPath=`.noCloudProvider`,reason=FieldValueInvalid
type Metal3ClusterSpec struct {
	// ControlPlaneEndpoint is where the workload cluster's API server is reached.
	// +optional
	ControlPlaneEndpoint APIEndpoint `json:"controlPlaneEndpoint,omitempty,omitzero"`

	// NoCloudProvider is the seed-era inverse of cloudProviderEnabled: true means no external
	// cloud provider runs in the workload cluster.
	//
	// Deprecated: use cloudProviderEnabled. Both may be set only if they agree.
	// +optional
	NoCloudProvider *bool `json:"noCloudProvider,omitempty"`

	// CloudProviderEnabled says whether an external cloud provider sets spec.providerID on the
	// workload cluster's Nodes. When false, metalwire sets it itself, finding each Node by its
	// metal3.io/uuid label. Unset (and noCloudProvider unset) means false, as upstream, whose
	// admission webhook stores false for an unset field.
	// +optional
	CloudProviderEnabled *bool `json:"cloudProviderEnabled,omitempty"`

	// ClusterNetwork names the network.metalwire.io ClusterNetwork (same namespace) whose
	// switches carry this cluster's networks. Machines then take hosts only among its available
	// ones and wait for their switch ports before provisioning. metalwire addition (seed 003).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ClusterNetwork string `json:"clusterNetwork,omitempty"`

	// FailureDomains the cluster's machines may be spread over; copied to status for Cluster API.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	FailureDomains []clusterv1.FailureDomain `json:"failureDomains,omitzero"`
}

// Metal3ClusterInitializationStatus reports the Cluster API v1beta2 provisioning signal.
// +kubebuilder:validation:MinProperties=1
type Metal3ClusterInitializationStatus struct {
	// Provisioned is true once the cluster's infrastructure is ready (the control plane endpoint
	// is valid). Cluster API reads it; it never goes back to false.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// Metal3ClusterStatus is the observed state of a Metal3Cluster.
type Metal3ClusterStatus struct {
	// Initialization is the Cluster API v1beta2 contract's provisioning signal.
	// +optional
	Initialization Metal3ClusterInitializationStatus `json:"initialization,omitempty,omitzero"`

	// Conditions: Ready (summarising OwnedByCluster and BaremetalInfrastructureReady),
	// OwnedByCluster, BaremetalInfrastructureReady and Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitzero"`

	// FailureDomains Cluster API may place machines in, from spec.failureDomains.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	FailureDomains []clusterv1.FailureDomain `json:"failureDomains,omitzero"`

	// LastUpdated is when the controller last changed this status.
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`

	// Deprecated holds the v1beta1 contract's status fields, as upstream CAPM3's v1beta2 does: a
	// v1beta1 client's conditions and failure fields. metalwire does not maintain them.
	// +optional
	Deprecated *DeprecatedStatus `json:"deprecated,omitempty"`
}

// DeprecatedStatus groups status fields kept for older contracts (upstream's
// Metal3ClusterDeprecatedStatus and Metal3MachineDeprecatedStatus, same JSON).
type DeprecatedStatus struct {
	// V1Beta1 holds the v1beta1 contract's status fields.
	// +optional
	V1Beta1 *V1Beta1DeprecatedStatus `json:"v1beta1,omitempty"`
}

// V1Beta1Condition is a condition of Cluster API's v1beta1 contract (with a severity), as Cluster
// API's deprecated Condition type writes it.
type V1Beta1Condition struct {
	// Type of the condition.
	Type string `json:"type"`
	// Status of the condition: True, False or Unknown.
	Status corev1.ConditionStatus `json:"status"`
	// Severity of a False condition: Error, Warning or Info.
	// +optional
	Severity string `json:"severity,omitempty"`
	// LastTransitionTime is when the condition last changed status.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// Reason is a CamelCase reason for the condition's last transition.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message is a human-readable description of the last transition.
	// +optional
	Message string `json:"message,omitempty"`
}

// V1Beta1DeprecatedStatus is the v1beta1 contract's conditions and failure fields.
type V1Beta1DeprecatedStatus struct {
	// Conditions are v1beta1 conditions (with a severity).
	// +optional
	Conditions []V1Beta1Condition `json:"conditions,omitzero"`

	// FailureReason is a v1beta1 terminal failure's token.
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`

	// FailureMessage is a v1beta1 terminal failure's description.
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3clusters,scope=Namespaced,categories=cluster-api,shortName=m3c;m3cluster;m3clusters;metal3c;metal3cluster
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta2"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels.cluster\\.x-k8s\\.io/cluster-name",description="Cluster this Metal3Cluster belongs to"
// +kubebuilder:printcolumn:name="Provisioned",type="boolean",JSONPath=".status.initialization.provisioned",description="Infrastructure is provisioned"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=`.status.conditions[?(@.type=="Ready")].status`,description="Ready condition"
// +kubebuilder:printcolumn:name="Endpoint",type="string",JSONPath=".spec.controlPlaneEndpoint.host",description="Control plane endpoint host"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"

// Metal3Cluster is the Cluster API infrastructure cluster for bare metal: it carries the workload
// cluster's control plane endpoint and whether a cloud provider runs in it.
type Metal3Cluster struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// +optional
	Spec Metal3ClusterSpec `json:"spec,omitempty,omitzero"`
	// +optional
	Status Metal3ClusterStatus `json:"status,omitempty,omitzero"`
}

// CloudProviderEnabled resolves spec.cloudProviderEnabled and the deprecated
// spec.noCloudProvider: cloudProviderEnabled wins when set (admission refuses a contradiction),
// then the inverse of noCloudProvider, then false, upstream's default: CAPM3's webhook stores
// false for an unset field, so a Metal3Cluster written without it (by a user, or stored by CAPM3
// before its webhook ran) gets its Nodes' providerID from the controller.
func (c *Metal3Cluster) CloudProviderEnabled() bool {
	switch {
	case c.Spec.CloudProviderEnabled != nil:
		return *c.Spec.CloudProviderEnabled
	case c.Spec.NoCloudProvider != nil:
		return !*c.Spec.NoCloudProvider
	default:
		return false
	}
}

// GetConditions returns the conditions, for Cluster API's conditions utilities.
func (c *Metal3Cluster) GetConditions() []metav1.Condition {
	return c.Status.Conditions
}

// SetConditions sets the conditions, for Cluster API's conditions utilities.
func (c *Metal3Cluster) SetConditions(conditions []metav1.Condition) {
	c.Status.Conditions = conditions
}

// +kubebuilder:object:root=true

// Metal3ClusterList is a list of Metal3Clusters.
type Metal3ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3Cluster `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Metal3Cluster{}, &Metal3ClusterList{})
}
