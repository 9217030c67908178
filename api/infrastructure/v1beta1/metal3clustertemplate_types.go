package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Metal3ClusterTemplateSpec holds the template of Metal3Clusters.
type Metal3ClusterTemplateSpec struct {
	Template Metal3ClusterTemplateResource `json:"template"`
}

// Metal3ClusterTemplateResource is the Metal3Cluster a ClusterClass stamps out.
type Metal3ClusterTemplateResource struct {
	Spec Metal3ClusterSpec `json:"spec"`
}

// Metal3ClusterTemplate is CAPM3's v1beta1 Metal3ClusterTemplate, served by conversion to v1beta2.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3clustertemplates,scope=Namespaced,categories=cluster-api,shortName=m3ct
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"
type Metal3ClusterTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec Metal3ClusterTemplateSpec `json:"spec,omitempty,omitzero"`
}

// Metal3ClusterTemplateList is a list of Metal3ClusterTemplates.
//
// +kubebuilder:object:root=true
type Metal3ClusterTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3ClusterTemplate `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Metal3ClusterTemplate{}, &Metal3ClusterTemplateList{})
}
