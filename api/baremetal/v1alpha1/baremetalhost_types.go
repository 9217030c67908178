package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Annotations on a BareMetalHost that metalwire reads or writes.
const (
	// PausedAnnotation stops BMO from reconciling the host while present. Its value says who
	// paused it, so each tool removes only its own pause.
	PausedAnnotation = "baremetalhost.metal3.io/paused"

	// DetachedAnnotation tells BMO to stop managing the host in Ironic.
	DetachedAnnotation = "baremetalhost.metal3.io/detached"

	// PreprovisioningNetworkDataReferenceAnnotation links a host to the
	// Metal3PreprovisioningDataTemplate that renders its pre-provisioning network data.
	PreprovisioningNetworkDataReferenceAnnotation = "baremetalhost.metal3.io/preprovisioningnetworkdata-reference"
)

// ProvisioningState is where BMO is in a host's life cycle.
type ProvisioningState string

// The provisioning states metalwire acts on. BMO has more; any other value is carried as is.
const (
	StateNone                    ProvisioningState = ""
	StateUnmanaged               ProvisioningState = "unmanaged"
	StateRegistering             ProvisioningState = "registering"
	StateMatchProfile            ProvisioningState = "match profile"
	StatePreparing               ProvisioningState = "preparing"
	StateReady                   ProvisioningState = "ready"
	StateAvailable               ProvisioningState = "available"
	StateProvisioning            ProvisioningState = "provisioning"
	StateProvisioned             ProvisioningState = "provisioned"
	StateDeprovisioning          ProvisioningState = "deprovisioning"
	StateInspecting              ProvisioningState = "inspecting"
	StateExternallyProvisioned   ProvisioningState = "externally provisioned"
	StatePoweringOffBeforeDelete ProvisioningState = "powering off before delete"
	StateDeleting                ProvisioningState = "deleting"
)

// OperationalStatus is BMO's summary of a host's health.
type OperationalStatus string

// Operational statuses as BMO writes them.
const (
	OperationalStatusOK         OperationalStatus = "OK"
	OperationalStatusDiscovered OperationalStatus = "discovered"
	OperationalStatusError      OperationalStatus = "error"
	OperationalStatusDelayed    OperationalStatus = "delayed"
	OperationalStatusDetached   OperationalStatus = "detached"
)

// Image is the image BMO writes to the host's disk.
// +kubebuilder:pruning:PreserveUnknownFields
type Image struct {
	// URL of the image to deploy.
	URL string `json:"url"`

	// Checksum of the image, or a URL of a file holding it.
	// +optional
	Checksum string `json:"checksum,omitempty"`

	// ChecksumType is the checksum algorithm: md5, sha256, sha512 or auto.
	// +optional
	ChecksumType string `json:"checksumType,omitempty"`

	// DiskFormat is the image format: raw, qcow2, vdi, vmdk or live-iso.
	// +optional
	DiskFormat *string `json:"format,omitempty"`
}

// CustomDeploy asks Ironic for a custom deploy procedure instead of writing an image.
type CustomDeploy struct {
	// Method is the custom deploy step to run.
	Method string `json:"method"`
}

// BareMetalHostSpec is the part of the host's desired state that metalwire reads or writes.
type BareMetalHostSpec struct {
	// Online says whether the host should be powered on.
	// +optional
	Online bool `json:"online"`

	// BootMACAddress is the MAC of the NIC the host boots from.
	// +optional
	BootMACAddress string `json:"bootMACAddress,omitempty"`

	// Image to deploy.
	// +optional
	Image *Image `json:"image,omitempty"`

	// UserData names the Secret holding cloud-init user data.
	// +optional
	UserData *corev1.SecretReference `json:"userData,omitempty"`

	// MetaData names the Secret holding cloud-init meta data.
	// +optional
	MetaData *corev1.SecretReference `json:"metaData,omitempty"`

	// NetworkData names the Secret holding network_data.json for the deployed host.
	// +optional
	NetworkData *corev1.SecretReference `json:"networkData,omitempty"`

	// PreprovisioningNetworkDataName names the Secret (same namespace) holding the network
	// data of the inspection and deploy ramdisk.
	// +optional
	PreprovisioningNetworkDataName string `json:"preprovisioningNetworkDataName,omitempty"`

	// ConsumerRef names the object using the host, such as a Metal3Machine.
	// +optional
	ConsumerRef *corev1.ObjectReference `json:"consumerRef,omitempty"`

	// CustomDeploy replaces image deployment with a custom deploy step.
	// +optional
	CustomDeploy *CustomDeploy `json:"customDeploy,omitempty"`

	// AutomatedCleaningMode is metadata (BMO's default: wipe disk metadata around provisioning)
	// or disabled. Empty here means not set by us; BMO defaults it.
	// +optional
	AutomatedCleaningMode string `json:"automatedCleaningMode,omitempty"`

	// DisablePowerOff says the host must never be powered off (it cannot be powered on again
	// remotely, for example); BMO refuses online: false on it.
	// +optional
	DisablePowerOff bool `json:"disablePowerOff,omitempty"`

	// NetworkInterfaces say, per interface, which switch port it is cabled to (switchPort, which
	// overrides what inspection's LLDP saw) and the HostNetworkAttachment its port gets. BMO's
	// field (v0.14); metalwire reads it to make NIC objects and configure the ports itself.
	// +optional
	NetworkInterfaces []NetworkInterface `json:"networkInterfaces,omitempty"`
}

// SwitchPort identifies a switch port (BMO's shape).
type SwitchPort struct {
	// SwitchID is the switch's management MAC address.
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$`
	SwitchID string `json:"switchID"`
	// PortID is the port's name in the switch's configuration.
	PortID string `json:"portID"`
}

// HostNetworkAttachmentRef names a HostNetworkAttachment.
type HostNetworkAttachmentRef struct {
	// Name of the HostNetworkAttachment.
	// +optional
	Name string `json:"name,omitempty"`
	// Namespace of the HostNetworkAttachment; empty is the host's.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// NetworkInterface is one interface of the host, by name or MAC address (BMO's shape).
type NetworkInterface struct {
	// Name of the interface, as inspection found it.
	// +optional
	Name string `json:"name,omitempty"`
	// MACAddress of the interface; it wins over Name.
	// +optional
	MACAddress string `json:"macAddress,omitempty"`
	// HostNetworkAttachment is how the interface's switch port is configured.
	// +optional
	HostNetworkAttachment HostNetworkAttachmentRef `json:"hostNetworkAttachment,omitempty"`
	// SwitchPort is the switch port the interface is cabled to; it overrides inspection's LLDP.
	// +optional
	SwitchPort *SwitchPort `json:"switchPort,omitempty"`
}

// VLANID is an 802.1Q VLAN identifier.
// +kubebuilder:validation:Minimum=0
// +kubebuilder:validation:Maximum=4094
type VLANID int32

// VLAN is a VLAN seen on a NIC during inspection.
type VLAN struct {
	ID   VLANID `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
}

// LLDP is what the switch on the other end of a NIC announced.
type LLDP struct {
	// SwitchID is the switch's chassis ID.
	// +optional
	SwitchID string `json:"switchID,omitempty"`

	// PortID is the switch port the NIC is cabled to.
	// +optional
	PortID string `json:"portID,omitempty"`

	// SwitchSystemName is the switch's system name.
	// +optional
	SwitchSystemName string `json:"switchSystemName,omitempty"`
}

// NIC is one network interface found by inspection.
// +kubebuilder:pruning:PreserveUnknownFields
type NIC struct {
	// Name of the interface, such as eno1.
	Name string `json:"name,omitempty"`

	// Model is the vendor and product IDs.
	// +optional
	Model string `json:"model,omitempty"`

	// MAC address of the interface.
	MAC string `json:"mac,omitempty"`

	// IP the interface had during inspection, if any.
	// +optional
	IP string `json:"ip,omitempty"`

	// SpeedGbps is the link speed.
	// +optional
	SpeedGbps int `json:"speedGbps,omitempty"`

	// VLANs seen on the interface.
	// +optional
	VLANs []VLAN `json:"vlans,omitempty"`

	// VLANID is the untagged VLAN.
	// +optional
	VLANID VLANID `json:"vlanId,omitempty"`

	// PXE says whether the interface can PXE boot.
	// +optional
	PXE bool `json:"pxe,omitempty"`

	// LLDP is the neighbour the interface saw, if any.
	// +optional
	LLDP *LLDP `json:"lldp,omitempty"`
}

// HardwareDetails is the inspected hardware; metalwire reads only the NICs and hostname.
// +kubebuilder:pruning:PreserveUnknownFields
type HardwareDetails struct {
	// NICs are the host's network interfaces.
	// +optional
	NIC []NIC `json:"nics,omitempty"`

	// Hostname at inspection time.
	// +optional
	Hostname string `json:"hostname,omitempty"`
}

// ProvisionStatus is where the host is in provisioning.
// +kubebuilder:pruning:PreserveUnknownFields
type ProvisionStatus struct {
	// State is the provisioning state.
	// +optional
	State ProvisioningState `json:"state,omitempty"`

	// ID is the host's Ironic node UUID.
	// +optional
	ID string `json:"ID,omitempty"`

	// Image is the image provisioned, or being provisioned.
	// +optional
	Image Image `json:"image,omitempty"`
}

// BareMetalHostStatus is the part of BMO's status metalwire reads.
type BareMetalHostStatus struct {
	// OperationalStatus summarises the host's health.
	// +optional
	OperationalStatus OperationalStatus `json:"operationalStatus,omitempty"`

	// ErrorType says which kind of error the host is in, if any.
	// +optional
	ErrorType string `json:"errorType,omitempty"`

	// ErrorMessage describes the error, if any.
	// +optional
	ErrorMessage string `json:"errorMessage"`

	// HardwareDetails found by inspection.
	// +optional
	HardwareDetails *HardwareDetails `json:"hardware,omitempty"`

	// Provisioning is the provisioning state and image.
	// +optional
	Provisioning ProvisionStatus `json:"provisioning"`

	// PoweredOn says whether the host is powered on.
	// +optional
	PoweredOn bool `json:"poweredOn"`
}

// BareMetalHost is a physical host managed by baremetal-operator: the subset metalwire uses.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=bmh;bmhost
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="State",type="string",JSONPath=".status.provisioning.state",description="Provisioning state"
// +kubebuilder:printcolumn:name="Consumer",type="string",JSONPath=".spec.consumerRef.name",description="Object using the host"
// +kubebuilder:printcolumn:name="Online",type="boolean",JSONPath=".spec.online",description="Whether the host should be powered on"
// +kubebuilder:printcolumn:name="Error",type="string",JSONPath=".status.errorType",description="Type of the error, if any"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type BareMetalHost struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec keeps every field BMO has; only those modelled here are typed.
	// +kubebuilder:pruning:PreserveUnknownFields
	Spec BareMetalHostSpec `json:"spec,omitempty"`

	// Status keeps every field BMO has; only those modelled here are typed.
	// +kubebuilder:pruning:PreserveUnknownFields
	Status BareMetalHostStatus `json:"status,omitempty"`
}

// BareMetalHostList is a list of BareMetalHosts.
//
// +kubebuilder:object:root=true
type BareMetalHostList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BareMetalHost `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &BareMetalHost{}, &BareMetalHostList{})
}
