package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SwitchCredentials names the Secret with a switch's login (BMO's shape).
type SwitchCredentials struct {
	// Type is password (keys username and password) or publickey (keys username and
	// ssh-privatekey).
	// +kubebuilder:validation:Enum=password;publickey
	// +kubebuilder:default=password
	Type string `json:"type"`
	// SecretName is the Secret in the switch's namespace.
	// +kubebuilder:validation:MinLength=1
	SecretName string `json:"secretName"`
}

// BareMetalSwitchSpec describes a top-of-rack switch (BMO's shape, v0.14).
type BareMetalSwitchSpec struct {
	// Address is the switch's management address (IP or host name).
	Address string `json:"address"`
	// MACAddress is the switch's management MAC address, as hosts' LLDP names it.
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$`
	MACAddress string `json:"macAddress"`
	// Driver is generic-switch.
	// +kubebuilder:default=generic-switch
	// +optional
	Driver string `json:"driver,omitempty"`
	// DeviceType is a networking-generic-switch device type (netmiko_arista_eos, ...).
	DeviceType string `json:"deviceType"`
	// Credentials name the Secret with the switch's login.
	Credentials SwitchCredentials `json:"credentials"`
	// Port is the management port; unset is the device type's default.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port *int32 `json:"port,omitempty"`
	// DisableCertificateVerification turns off TLS certificate checks (HTTPS APIs).
	// +optional
	DisableCertificateVerification *bool `json:"disableCertificateVerification,omitempty"`
}

// BareMetalSwitch is baremetal-operator's description of a switch. This is the subset metalwire
// reads; in production BMO installs the CRD.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=baremetalswitches,scope=Namespaced,shortName=bms
type BareMetalSwitch struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec BareMetalSwitchSpec `json:"spec,omitempty"`
}

// BareMetalSwitchList is a list of BareMetalSwitches.
//
// +kubebuilder:object:root=true
type BareMetalSwitchList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BareMetalSwitch `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &BareMetalSwitch{}, &BareMetalSwitchList{})
}
