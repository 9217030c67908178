package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Metal3DataClaimSpec is CAPM3 v1beta1's Metal3DataClaim spec.
type Metal3DataClaimSpec struct {
	// +optional
	Template corev1.ObjectReference `json:"template"`
}

// Metal3DataClaimStatus is CAPM3 v1beta1's Metal3DataClaim status.
type Metal3DataClaimStatus struct {
	// +optional
	RenderedData *corev1.ObjectReference `json:"renderedData,omitempty"`
	// +optional
	ErrorMessage *string `json:"errorMessage,omitempty"`
}

// Metal3DataClaim is CAPM3's v1beta1 Metal3DataClaim, served by conversion to v1beta2.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3dataclaims,scope=Namespaced,categories=cluster-api,shortName=m3dc;m3dataclaim;m3dataclaims;metal3dc;metal3dataclaim
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Template",type="string",JSONPath=".spec.template.name",description="Metal3DataTemplate claimed from"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type Metal3DataClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   Metal3DataClaimSpec   `json:"spec,omitempty,omitzero"`
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
