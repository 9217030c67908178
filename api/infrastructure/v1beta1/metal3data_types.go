package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Metal3DataSpec is CAPM3 v1beta1's Metal3Data spec.
type Metal3DataSpec struct {
	// +optional
	Index *int `json:"index,omitempty"`
	// templateReference is v1beta1-only (v1beta2 dropped it); it is kept in an annotation.
	// +optional
	TemplateReference string `json:"templateReference,omitempty"`
	// +optional
	MetaData *corev1.SecretReference `json:"metaData,omitempty"`
	// +optional
	NetworkData *corev1.SecretReference `json:"networkData,omitempty"`
	// +optional
	Claim corev1.ObjectReference `json:"claim"`
	// +optional
	Template corev1.ObjectReference `json:"template"`
}

// Metal3DataStatus is CAPM3 v1beta1's Metal3Data status.
type Metal3DataStatus struct {
	// +optional
	Ready bool `json:"ready"`
	// +optional
	ErrorMessage *string `json:"errorMessage,omitempty"`
}

// Metal3Data is CAPM3's v1beta1 Metal3Data, served by conversion to v1beta2.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3datas,scope=Namespaced,categories=cluster-api,shortName=m3d;m3data;m3datas;metal3d;metal3data
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Index",type="integer",JSONPath=".spec.index",description="Index of the host in the template"
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready",description="Secrets rendered"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type Metal3Data struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   Metal3DataSpec   `json:"spec,omitempty,omitzero"`
	Status Metal3DataStatus `json:"status,omitempty,omitzero"`
}

// Metal3DataList is a list of Metal3Datas.
//
// +kubebuilder:object:root=true
type Metal3DataList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3Data `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Metal3Data{}, &Metal3DataList{})
}
