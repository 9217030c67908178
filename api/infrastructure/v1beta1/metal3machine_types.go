package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Metal3MachineSpec is CAPM3 v1beta1's Metal3Machine spec.
type Metal3MachineSpec struct {
	// +optional
	ProviderID *string `json:"providerID,omitempty"`
	// +optional
	Image Image `json:"image,omitempty"`
	// +optional
	CustomDeploy *CustomDeploy `json:"customDeploy,omitempty"`
	// +optional
	UserData *corev1.SecretReference `json:"userData,omitempty"`
	// +optional
	HostSelector HostSelector `json:"hostSelector,omitempty,omitzero"`
	// +optional
	DataTemplate *corev1.ObjectReference `json:"dataTemplate,omitempty"`
	// +optional
	MetaData *corev1.SecretReference `json:"metaData,omitempty"`
	// +optional
	NetworkData *corev1.SecretReference `json:"networkData,omitempty"`
	// automatedCleaningMode: metadata or disabled.
	// +optional
	AutomatedCleaningMode *string `json:"automatedCleaningMode,omitempty"`
	// +optional
	FailureDomain string `json:"failureDomain,omitempty"`
}

// Metal3MachineStatus is CAPM3 v1beta1's Metal3Machine status.
type Metal3MachineStatus struct {
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`
	// +optional
	Addresses MachineAddresses `json:"addresses,omitzero"`
	// phase is v1beta1-only; v1beta2 has no phase.
	// +optional
	Phase string `json:"phase,omitempty"`
	// ready is v1beta2's status.initialization.provisioned.
	// +optional
	Ready bool `json:"ready"`
	// +optional
	UserData *corev1.SecretReference `json:"userData,omitempty"`
	// +optional
	RenderedData *corev1.ObjectReference `json:"renderedData,omitempty"`
	// +optional
	MetaData *corev1.SecretReference `json:"metaData,omitempty"`
	// +optional
	NetworkData *corev1.SecretReference `json:"networkData,omitempty"`
	// conditions in Cluster API's v1beta1 shape.
	// +optional
	Conditions Conditions `json:"conditions,omitzero"`
	// v1beta2 holds the conditions of the v1beta2 contract (v1beta2's status.conditions).
	// +optional
	V1Beta2 *Metal3MachineV1Beta2Status `json:"v1beta2,omitempty"`
}

// Metal3MachineV1Beta2Status holds the v1beta2 contract's conditions.
type Metal3MachineV1Beta2Status struct {
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitzero"`
}

// Metal3Machine is CAPM3's v1beta1 Metal3Machine, served by conversion to v1beta2.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3machines,scope=Namespaced,categories=cluster-api,shortName=m3m;m3machine;m3machines;metal3m;metal3machine
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels.cluster\\.x-k8s\\.io/cluster-name",description="Cluster this Metal3Machine belongs to"
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready",description="The host is provisioned"
// +kubebuilder:printcolumn:name="ProviderID",type="string",JSONPath=".spec.providerID",description="Provider ID"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"
type Metal3Machine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   Metal3MachineSpec   `json:"spec,omitempty,omitzero"`
	Status Metal3MachineStatus `json:"status,omitempty,omitzero"`
}

// Metal3MachineList is a list of Metal3Machines.
//
// +kubebuilder:object:root=true
type Metal3MachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3Machine `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Metal3Machine{}, &Metal3MachineList{})
}
