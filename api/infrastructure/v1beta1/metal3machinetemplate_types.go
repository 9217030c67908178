package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Metal3MachineTemplateSpec holds the template of Metal3Machines.
type Metal3MachineTemplateSpec struct {
	Template Metal3MachineTemplateResource `json:"template"`
	// nodeReuse asks to give a machine of a scaled-down MachineDeployment's host back to the
	// same MachineDeployment.
	// +optional
	// +kubebuilder:default=false
	NodeReuse bool `json:"nodeReuse"`
}

// Metal3MachineTemplateResource is the Metal3Machine stamped out for each Machine.
type Metal3MachineTemplateResource struct {
	Spec Metal3MachineSpec `json:"spec"`
}

// Metal3MachineTemplate is CAPM3's v1beta1 Metal3MachineTemplate, served by conversion to v1beta2.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3machinetemplates,scope=Namespaced,categories=cluster-api,shortName=m3mt;m3machinetemplate;m3machinetemplates;metal3mt;metal3machinetemplate
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"
type Metal3MachineTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec Metal3MachineTemplateSpec `json:"spec,omitempty,omitzero"`
}

// Metal3MachineTemplateList is a list of Metal3MachineTemplates.
//
// +kubebuilder:object:root=true
type Metal3MachineTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3MachineTemplate `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Metal3MachineTemplate{}, &Metal3MachineTemplateList{})
}
