package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Metal3RemediationTemplateSpec holds the Metal3Remediation a MachineHealthCheck creates.
type Metal3RemediationTemplateSpec struct {
	// template is the Metal3Remediation created for each unhealthy Machine.
	// +required
	Template Metal3RemediationTemplateResource `json:"template,omitempty,omitzero"`
}

// Metal3RemediationTemplateResource is the Metal3Remediation created from the template.
type Metal3RemediationTemplateResource struct {
	// spec of each Metal3Remediation.
	// +required
	Spec Metal3RemediationSpec `json:"spec,omitempty,omitzero"`
}

// Metal3RemediationTemplateStatus is upstream's (unused) template status.
type Metal3RemediationTemplateStatus struct {
	// status of a Metal3Remediation.
	// +optional
	Status Metal3RemediationStatus `json:"status,omitempty,omitzero"`
}

// Metal3RemediationTemplate is what a MachineHealthCheck's remediationTemplate names: the
// Metal3Remediation it creates for each unhealthy Machine.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3remediationtemplates,scope=Namespaced,categories=cluster-api,shortName=m3rt;m3remediationtemplate;m3remediationtemplates;metal3rt;metal3remediationtemplate
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta2"
type Metal3RemediationTemplate struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec holds the template.
	// +optional
	Spec Metal3RemediationTemplateSpec `json:"spec,omitempty,omitzero"`

	// status is upstream's, unused.
	// +optional
	Status Metal3RemediationTemplateStatus `json:"status,omitempty,omitzero"`
}

// Metal3RemediationTemplateList is a list of Metal3RemediationTemplates.
//
// +kubebuilder:object:root=true
type Metal3RemediationTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3RemediationTemplate `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Metal3RemediationTemplate{}, &Metal3RemediationTemplateList{})
}
