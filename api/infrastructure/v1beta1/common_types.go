package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// APIEndpoint is where the workload cluster's API server listens.
type APIEndpoint struct {
	// host is the IP address or DNS name of the API server.
	// +optional
	Host string `json:"host"`

	// port is the API server's port.
	// +optional
	Port int `json:"port"`
}

// HostSelector chooses BareMetalHosts by their labels.
type HostSelector struct {
	// matchLabels: every key must have exactly this value.
	// +optional
	MatchLabels map[string]string `json:"matchLabels,omitzero"`

	// matchExpressions: every requirement must hold.
	// +optional
	MatchExpressions []HostSelectorRequirement `json:"matchExpressions,omitzero"`
}

// HostSelectorRequirement is one label requirement (key, operator, values).
type HostSelectorRequirement struct {
	Key string `json:"key"`
	// operator is a Kubernetes label selection operator: in, notin, =, ==, !=, exists, !, gt, lt.
	Operator string `json:"operator"`
	// +optional
	Values []string `json:"values"`
}

// Image is the image written to the host's disk.
type Image struct {
	// url of the image.
	// +optional
	URL string `json:"url"`

	// checksum of the image, or the URL of a file holding it.
	// +optional
	Checksum *string `json:"checksum,omitempty"`

	// checksumType: md5, sha256 or sha512.
	// +optional
	ChecksumType *string `json:"checksumType,omitempty"`

	// format of the image: raw, qcow2, vdi, vmdk or live-iso (v1beta2 calls it diskFormat).
	// +optional
	DiskFormat *string `json:"format,omitempty"`
}

// CustomDeploy names a custom deploy method of Ironic instead of an image.
type CustomDeploy struct {
	Method string `json:"method"`
}

// Condition is a condition as Cluster API's v1beta1 contract writes it (with a severity). v1beta2
// uses metav1.Condition instead; these are kept as written, not maintained by metalwire.
type Condition struct {
	Type   string                 `json:"type"`
	Status corev1.ConditionStatus `json:"status"`
	// +optional
	Severity string `json:"severity,omitempty"`
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// Conditions is a list of v1beta1 conditions.
type Conditions []Condition

// FailureDomainSpec is one failure domain, as Cluster API's v1beta1 contract shapes it.
type FailureDomainSpec struct {
	// +optional
	ControlPlane *bool `json:"controlPlane,omitempty"`
	// +optional
	Attributes map[string]string `json:"attributes,omitzero"`
}

// FailureDomains maps a failure domain's name to its spec (v1beta2 makes it a list with names).
type FailureDomains map[string]FailureDomainSpec

// MachineAddress is one address of a machine.
type MachineAddress struct {
	Type    string `json:"type"`
	Address string `json:"address"`
}

// MachineAddresses is a list of addresses.
type MachineAddresses []MachineAddress
