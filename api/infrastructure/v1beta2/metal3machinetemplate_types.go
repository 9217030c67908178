package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Metal3MachineTemplateResource is what a Metal3Machine created from the template looks like.
type Metal3MachineTemplateResource struct {
	// ObjectMeta holds labels and annotations copied to each Metal3Machine.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`

	// Spec of each Metal3Machine; validated as a Metal3Machine's spec is.
	Spec Metal3MachineSpec `json:"spec"`
}

// Metal3MachineTemplateSpec is the desired state of a Metal3MachineTemplate.
type Metal3MachineTemplateSpec struct {
	// Template is the Metal3Machine to create for each Machine.
	Template Metal3MachineTemplateResource `json:"template"`

	// NodeReuse asks that, during a rolling upgrade, new machines take the hosts that the old
	// machines of this template released, rather than any matching host.
	// +optional
	// +kubebuilder:default=false
	NodeReuse *bool `json:"nodeReuse,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3machinetemplates,scope=Namespaced,categories=cluster-api,shortName=m3mt;m3machinetemplate;m3machinetemplates;metal3mt;metal3machinetemplate
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta2"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"

// Metal3MachineTemplate is a Metal3Machine blueprint, used by MachineDeployments,
// MachineSets and KubeadmControlPlanes to create one Metal3Machine per Machine.
type Metal3MachineTemplate struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// +optional
	Spec Metal3MachineTemplateSpec `json:"spec,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// Metal3MachineTemplateList is a list of Metal3MachineTemplates.
type Metal3MachineTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3MachineTemplate `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Metal3MachineTemplate{}, &Metal3MachineTemplateList{})
}
