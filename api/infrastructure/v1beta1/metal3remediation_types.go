package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Duration is a duration in Go's notation (300s, 5m0s), held as the text a client wrote so
// that reading the object back shows that text (metav1.Duration would rewrite 300s as 5m0s).
// +kubebuilder:validation:Type=string
type Duration string

// RemediationType is CAPM3 v1beta1's remediation type.
type RemediationType string

// Metal3RemediationSpec is CAPM3 v1beta1's Metal3Remediation spec.
type Metal3RemediationSpec struct {
	// +optional
	Strategy *RemediationStrategy `json:"strategy,omitempty"`
}

// RemediationStrategy is CAPM3 v1beta1's remediation strategy: a timeout as a duration where
// v1beta2 has timeoutSeconds.
type RemediationStrategy struct {
	// +optional
	Type RemediationType `json:"type,omitempty"`
	// +optional
	RetryLimit int `json:"retryLimit,omitempty"`
	// +optional
	// timeout is a duration as Go writes it (300s, 5m); its text is kept as written.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s')",message="timeout must be a duration such as 300s or 5m"
	Timeout *Duration `json:"timeout,omitempty"`
}

// Metal3RemediationStatus is CAPM3 v1beta1's Metal3Remediation status.
type Metal3RemediationStatus struct {
	// +optional
	Phase string `json:"phase,omitempty"`
	// +optional
	RetryCount int `json:"retryCount,omitempty"`
	// +optional
	LastRemediated *metav1.Time `json:"lastRemediated,omitempty"`
}

// Metal3Remediation is CAPM3's v1beta1 Metal3Remediation, served by conversion to v1beta2.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3remediations,scope=Namespaced,categories=cluster-api,shortName=m3r;m3remediation
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Retry limit",type=string,JSONPath=".spec.strategy.retryLimit",description="How many times the host is rebooted again"
// +kubebuilder:printcolumn:name="Retry count",type=string,JSONPath=".status.retryCount",description="How many retries were started"
// +kubebuilder:printcolumn:name="Last Remediated",type=string,JSONPath=".status.lastRemediated",description="When the last reboot started"
// +kubebuilder:printcolumn:name="Strategy",type=string,JSONPath=".spec.strategy.type",description="Remediation strategy"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=".status.phase",description="Phase of the remediation"
type Metal3Remediation struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   Metal3RemediationSpec   `json:"spec,omitempty,omitzero"`
	Status Metal3RemediationStatus `json:"status,omitempty,omitzero"`
}

// Metal3RemediationList is a list of Metal3Remediations.
//
// +kubebuilder:object:root=true
type Metal3RemediationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3Remediation `json:"items"`
}

// Metal3RemediationTemplateSpec is CAPM3 v1beta1's Metal3RemediationTemplate spec.
type Metal3RemediationTemplateSpec struct {
	Template Metal3RemediationTemplateResource `json:"template"`
}

// Metal3RemediationTemplateResource is CAPM3 v1beta1's template resource.
type Metal3RemediationTemplateResource struct {
	Spec Metal3RemediationSpec `json:"spec"`
}

// Metal3RemediationTemplateStatus is CAPM3 v1beta1's template status.
type Metal3RemediationTemplateStatus struct {
	Status Metal3RemediationStatus `json:"status"`
}

// Metal3RemediationTemplate is CAPM3's v1beta1 Metal3RemediationTemplate, served by conversion
// to v1beta2.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3remediationtemplates,scope=Namespaced,categories=cluster-api,shortName=m3rt;m3remediationtemplate;m3remediationtemplates;metal3rt;metal3remediationtemplate
// +kubebuilder:subresource:status
type Metal3RemediationTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   Metal3RemediationTemplateSpec   `json:"spec,omitempty,omitzero"`
	Status Metal3RemediationTemplateStatus `json:"status,omitempty,omitzero"`
}

// Metal3RemediationTemplateList is a list of Metal3RemediationTemplates.
//
// +kubebuilder:object:root=true
type Metal3RemediationTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3RemediationTemplate `json:"items"`
}

func init() {
	objectTypes = append(objectTypes,
		&Metal3Remediation{}, &Metal3RemediationList{},
		&Metal3RemediationTemplate{}, &Metal3RemediationTemplateList{})
}
