package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SwitchPortMode is how a switch port carries VLANs (BMO's values).
// +kubebuilder:validation:Enum=access;trunk;hybrid
type SwitchPortMode string

// The switch port modes.
const (
	SwitchPortModeAccess SwitchPortMode = "access"
	SwitchPortModeTrunk  SwitchPortMode = "trunk"
	SwitchPortModeHybrid SwitchPortMode = "hybrid"
)

// HostNetworkAttachmentSpec is how a host interface's switch port is configured (BMO's shape,
// v0.14).
type HostNetworkAttachmentSpec struct {
	// Mode is access (one untagged VLAN), trunk (tagged VLANs, and the native one untagged) or
	// hybrid (the same, as some switches name it).
	// +kubebuilder:default=access
	Mode SwitchPortMode `json:"mode"`

	// NativeVLAN is the untagged VLAN.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4094
	NativeVLAN int `json:"nativeVLAN"`

	// AllowedVLANs are the tagged VLANs of a trunk or hybrid port: single ids ("100") or ranges
	// ("100-200").
	// +optional
	// +kubebuilder:validation:items:Pattern=`^\d+(-\d+)?$`
	AllowedVLANs []string `json:"allowedVLANs,omitempty"`

	// MTU of the port.
	// +kubebuilder:validation:Minimum=68
	// +kubebuilder:validation:Maximum=9216
	// +optional
	MTU *int `json:"mtu,omitempty"`
}

// HostNetworkAttachment is baremetal-operator's description of a host port's configuration.
// This is the subset metalwire reads; in production BMO installs the CRD.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=hostnetworkattachments,scope=Namespaced
type HostNetworkAttachment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec HostNetworkAttachmentSpec `json:"spec,omitempty"`
}

// HostNetworkAttachmentList is a list of HostNetworkAttachments.
//
// +kubebuilder:object:root=true
type HostNetworkAttachmentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HostNetworkAttachment `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &HostNetworkAttachment{}, &HostNetworkAttachmentList{})
}
