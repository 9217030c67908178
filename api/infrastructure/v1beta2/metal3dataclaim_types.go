package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DataClaimFinalizer lets the template controller release the claim's index before the claim
// goes. The value is CAPM3's.
const DataClaimFinalizer = "metal3dataclaim.infrastructure.cluster.x-k8s.io"

// Metal3DataClaim conditions.
const (
	// DataClaimReadyCondition is True once the claim's Metal3Data is ready.
	DataClaimReadyCondition = "Ready"
)

// Metal3DataClaim condition reasons.
const (
	// DataClaimDataReadyReason: status.renderedData names a ready Metal3Data.
	DataClaimDataReadyReason = "DataReady"

	// DataClaimWaitingForIndexReason: the template controller has not given the claim an
	// index yet.
	DataClaimWaitingForIndexReason = "WaitingForIndex"

	// DataClaimWaitingForDataReason: the Metal3Data exists and is not rendered yet; its
	// conditions say why.
	DataClaimWaitingForDataReason = "WaitingForData"

	// DataClaimTemplateNotFoundReason: spec.template names no Metal3DataTemplate (retried:
	// the template may be applied after the machines).
	DataClaimTemplateNotFoundReason = "TemplateNotFound"

	// DataClaimDeletingReason: the claim is being deleted and waits for its Metal3Data to go.
	DataClaimDeletingReason = "Deleting"
)

// Metal3DataClaimSpec names the template a Metal3Machine wants its data from. The machine
// controller creates the claim, named after the Metal3Machine.
type Metal3DataClaimSpec struct {
	// template is the Metal3DataTemplate to render from, in the claim's namespace.
	// +required
	// +kubebuilder:validation:XValidation:rule="has(self.name) && self.name != ''",message="template.name is required: name the Metal3DataTemplate, in the claim's namespace, to take an index from"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="template is immutable: the claim already holds an index in that template; delete the claim (the machine controller creates a new one) to use another template"
	Template corev1.ObjectReference `json:"template"`
}

// Metal3DataClaimStatus says which Metal3Data serves the claim.
type Metal3DataClaimStatus struct {
	// renderedData is the Metal3Data created for this claim.
	// +optional
	RenderedData *corev1.ObjectReference `json:"renderedData,omitempty"`

	// errorMessage says why the claim cannot be served, in words a person can act on.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=10240
	ErrorMessage *string `json:"errorMessage,omitempty"`

	// conditions describe the claim: Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitzero"`
}

// Metal3DataClaim asks a Metal3DataTemplate for an index and a Metal3Data for one Metal3Machine.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3dataclaims,scope=Namespaced,categories=cluster-api,shortName=m3dc;m3dataclaim;m3dataclaims;metal3dc;metal3dataclaim
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Template",type="string",JSONPath=".spec.template.name",description="Metal3DataTemplate claimed from"
// +kubebuilder:printcolumn:name="Data",type="string",JSONPath=".status.renderedData.name",description="Metal3Data serving the claim"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description="Metal3Data rendered"
// +kubebuilder:printcolumn:name="Error",type="string",JSONPath=".status.errorMessage",description="Why the claim is not served"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type Metal3DataClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec names the template.
	// +required
	Spec Metal3DataClaimSpec `json:"spec"`

	// status names the Metal3Data serving the claim.
	// +optional
	Status Metal3DataClaimStatus `json:"status,omitempty,omitzero"`
}

// Metal3DataClaimList is a list of Metal3DataClaims.
//
// +kubebuilder:object:root=true
type Metal3DataClaimList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3DataClaim `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Metal3DataClaim{}, &Metal3DataClaimList{})
}
