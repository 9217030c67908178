package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Metal3ClusterTemplateResource is what a Metal3Cluster created from the template looks like.
type Metal3ClusterTemplateResource struct {
	// ObjectMeta holds labels and annotations copied to the Metal3Cluster.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`

	// Spec of the Metal3Cluster; validated as a Metal3Cluster's spec is.
	Spec Metal3ClusterSpec `json:"spec"`
}

// Metal3ClusterTemplateSpec is the desired state of a Metal3ClusterTemplate.
type Metal3ClusterTemplateSpec struct {
	// Template is the Metal3Cluster to create.
	Template Metal3ClusterTemplateResource `json:"template"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3clustertemplates,scope=Namespaced,categories=cluster-api,shortName=m3ct
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta2"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"

// Metal3ClusterTemplate is a Metal3Cluster blueprint, used by Cluster API ClusterClasses.
type Metal3ClusterTemplate struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// +optional
	Spec Metal3ClusterTemplateSpec `json:"spec,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// Metal3ClusterTemplateList is a list of Metal3ClusterTemplates.
type Metal3ClusterTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3ClusterTemplate `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Metal3ClusterTemplate{}, &Metal3ClusterTemplateList{})
}
