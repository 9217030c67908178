package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RemediationType names how a Metal3Remediation remediates a machine.
type RemediationType string

// RebootRemediationStrategy power-cycles the machine's BareMetalHost; it is the only strategy,
// as upstream.
const RebootRemediationStrategy RemediationType = "Reboot"

// RemediationFinalizer keeps a Metal3Remediation until the host it powered off is powered on
// again and the Node it deleted is restored. The value is CAPM3's.
const RemediationFinalizer = "metal3remediation.infrastructure.cluster.x-k8s.io"

// UnhealthyAnnotation on a BareMetalHost keeps it out of host selection: a remediation that ran
// out of retries sets it (value RemediationUnhealthyValue), and a person removes it once the
// host is repaired. The key is CAPM3's.
const UnhealthyAnnotation = "capm3.metal3.io/unhealthy"

// RemediationUnhealthyValue is the value a remediation gives UnhealthyAnnotation, as upstream.
const RemediationUnhealthyValue = "capm3/UnhealthyNode"

// Metal3Remediation phases (status.phase), with CAPM3's values.
const (
	// PhaseRunning: the host is being powered off and its Node deleted.
	PhaseRunning = "Running"
	// PhaseWaiting: the host was asked to power on again; waiting for it to come back and
	// for its Node to re-register, or for timeoutSeconds to pass.
	PhaseWaiting = "Waiting"
	// PhaseDeleting: retries ran out; the host is marked unhealthy and the Machine left to
	// Cluster API, which deletes it.
	PhaseDeleting = "Deleting machine"
	// PhaseFailed: nothing is done because the host's spec.online is false (someone powered it
	// off on purpose).
	PhaseFailed = "Failed"
)

// Metal3Remediation condition types and reasons (a metalwire addition; upstream has none).
const (
	// RemediationProgressingCondition says what the remediation is doing or waiting for.
	RemediationProgressingCondition = "Progressing"

	// RemediationPoweringOffReason: the host was asked to power off and has not yet.
	RemediationPoweringOffReason = "PoweringOff"
	// RemediationDeletingNodeReason: the host is off; its Node is being deleted.
	RemediationDeletingNodeReason = "DeletingNode"
	// RemediationDrainingNodeReason: the host is off; its Node is tainted
	// node.kubernetes.io/out-of-service and its pods and volumes are going (the taint mode).
	RemediationDrainingNodeReason = "DrainingNode"
	// RemediationPoweringOnReason: the host was asked to power on again.
	RemediationPoweringOnReason = "PoweringOn"
	// RemediationWaitingForNodeReason: the host is on; waiting for its Node to come back and
	// for Cluster API to find the machine healthy.
	RemediationWaitingForNodeReason = "WaitingForNode"
	// RemediationRetriesExhaustedReason: timeoutSeconds passed after the last allowed retry.
	RemediationRetriesExhaustedReason = "RetriesExhausted"
	// RemediationHostOfflineReason: the host's spec.online is false; nothing is done.
	RemediationHostOfflineReason = "HostOffline"
	// RemediationUnsupportedStrategyReason: spec.strategy.type is not Reboot.
	RemediationUnsupportedStrategyReason = "UnsupportedStrategy"
	// RemediationHostNotFoundReason: the Machine's Metal3Machine names no host that exists.
	RemediationHostNotFoundReason = "HostNotFound"
	// RemediationWorkloadClusterUnreachableReason: the workload cluster's API server cannot
	// be reached to read or delete the Node.
	RemediationWorkloadClusterUnreachableReason = "WorkloadClusterUnreachable"
	// RemediationDoneReason: the host is back and its Node restored.
	RemediationDoneReason = "Done"
)

// Metal3RemediationSpec is how to remediate the machine.
type Metal3RemediationSpec struct {
	// strategy is how to remediate; without one, nothing is done.
	// +optional
	Strategy *RemediationStrategy `json:"strategy,omitempty"`
}

// RemediationStrategy is the remediation's type, how often it is retried and how long each
// attempt is given.
type RemediationStrategy struct {
	// type of remediation: Reboot power-cycles the host.
	// +optional
	// +kubebuilder:validation:Enum=Reboot
	Type RemediationType `json:"type,omitempty"`

	// retryLimit is how many times the host is rebooted again after the first reboot when the
	// machine stays unhealthy, before the host is marked unhealthy and the Machine deleted.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=1
	RetryLimit int32 `json:"retryLimit,omitempty"`

	// timeoutSeconds is how long each reboot is given to make the machine healthy (counted
	// from the reboot) before the next retry.
	// +optional
	// +kubebuilder:validation:Minimum=100
	// +kubebuilder:default=600
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty"`
}

// Metal3RemediationStatus is how far the remediation is.
type Metal3RemediationStatus struct {
	// phase is Running, Waiting, "Deleting machine" or Failed.
	// +optional
	// +kubebuilder:validation:Enum=Running;Waiting;Deleting machine;Failed
	Phase string `json:"phase,omitempty"`

	// retryCount is how many retries were started (the first reboot is not one).
	// +optional
	// +kubebuilder:validation:Minimum=1
	RetryCount int32 `json:"retryCount,omitempty"`

	// lastRemediated is when the last reboot was started.
	// +optional
	LastRemediated *metav1.Time `json:"lastRemediated,omitempty"`

	// conditions say what the remediation is doing or waiting for: Progressing (a metalwire
	// addition).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitzero"`
}

// Metal3Remediation remediates one unhealthy Machine by rebooting its BareMetalHost. Cluster
// API's MachineHealthCheck creates it from a Metal3RemediationTemplate, named and owned as the
// Machine.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3remediations,scope=Namespaced,categories=cluster-api,shortName=m3r;m3remediation
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta2"
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Retry limit",type=string,JSONPath=".spec.strategy.retryLimit",description="How many times the host is rebooted again"
// +kubebuilder:printcolumn:name="Retry count",type=string,JSONPath=".status.retryCount",description="How many retries were started"
// +kubebuilder:printcolumn:name="Last Remediated",type=string,JSONPath=".status.lastRemediated",description="When the last reboot started"
// +kubebuilder:printcolumn:name="Strategy",type=string,JSONPath=".spec.strategy.type",description="Remediation strategy"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=".status.phase",description="Phase of the remediation"
type Metal3Remediation struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is how to remediate.
	// +optional
	Spec Metal3RemediationSpec `json:"spec,omitempty,omitzero"`

	// status is how far the remediation is.
	// +optional
	Status Metal3RemediationStatus `json:"status,omitempty,omitzero"`
}

// GetConditions returns the remediation's conditions, for Cluster API's condition helpers.
func (in *Metal3Remediation) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the remediation's conditions.
func (in *Metal3Remediation) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }

// Metal3RemediationList is a list of Metal3Remediations.
//
// +kubebuilder:object:root=true
type Metal3RemediationList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3Remediation `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Metal3Remediation{}, &Metal3RemediationList{})
}
