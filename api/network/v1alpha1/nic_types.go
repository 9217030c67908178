package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// SwitchPortRef is the switch port a network card is cabled to.
type SwitchPortRef struct {
	// Name of the switch in the NetworkDevice's spec.switches.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Port is the port as the switch names it ("eth1", "Ethernet1/1", or a number).
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=64
	Port intstr.IntOrString `json:"port"`
}

// NICNetworkDevice is what a network card is cabled to.
type NICNetworkDevice struct {
	// Switch is the switch port at the other end of the cable.
	Switch SwitchPortRef `json:"switch"`
}

// NICCapability is what a network card can do; ClusterNetwork nicHints match it.
type NICCapability struct {
	// Speed in Mb/s.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Speed int32 `json:"speed,omitempty"`
	// SmartNIC says the card is a SmartNIC (DPU).
	// +optional
	SmartNIC bool `json:"smartNIC,omitempty"`
}

// CardSwitch is the virtual switch on a SmartNIC (DPU): its port facing the host and its port
// cabled to the top-of-rack switch.
//
// +kubebuilder:validation:XValidation:rule="self.hostPort != self.uplinkPort",message="smartNIC.hostPort and smartNIC.uplinkPort are the card switch's two ends; name two different ports"
type CardSwitch struct {
	// Switch is the card's switch: a switch of the NIC's NetworkDevice (the card's Open vSwitch,
	// reached like any other switch).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Switch string `json:"switch"`
	// HostPort is the card switch's port facing the host (a representor such as pf0hpf).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	HostPort string `json:"hostPort"`
	// UplinkPort is the card switch's port cabled to the top-of-rack port (such as p0).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	UplinkPort string `json:"uplinkPort"`
}

// HostNIC is one network card of the host.
//
// +kubebuilder:validation:XValidation:rule="!has(self.smartNIC) || (has(self.capability) && has(self.capability.smartNIC) && self.capability.smartNIC)",message="smartNIC names the card's own switch: set capability.smartNIC: true on this card, or remove smartNIC",fieldPath=".smartNIC"
type HostNIC struct {
	// Name is the host's interface name (eno1), if known.
	// +kubebuilder:validation:MaxLength=15
	// +optional
	Name string `json:"name,omitempty"`
	// MAC is the card's MAC address, if known.
	// +kubebuilder:validation:Pattern=`^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$`
	// +optional
	MAC string `json:"mac,omitempty"`
	// NetworkDevice is the switch port it is cabled to.
	NetworkDevice NICNetworkDevice `json:"networkDevice"`
	// Capability of the card.
	// +optional
	Capability NICCapability `json:"capability,omitempty"`
	// SmartNIC is the virtual switch on the card (a SmartNIC or DPU running its own switch)
	// between the host and the top-of-rack port networkDevice names: the card's networks are
	// configured on both. Only on a card with capability.smartNIC.
	// +optional
	SmartNIC *CardSwitch `json:"smartNIC,omitempty"`
}

// NICSpec describes a host's network cards and where each is cabled.
//
// +kubebuilder:validation:XValidation:rule="self.nics.all(n, self.nics.exists_one(m, m.networkDevice.switch.name == n.networkDevice.switch.name && string(m.networkDevice.switch.port) == string(n.networkDevice.switch.port)))",message="two network cards are cabled to one switch port; each entry of nics needs its own switch port",fieldPath=".nics"
type NICSpec struct {
	// Node is the name of the BareMetalHost whose cards these are (the seed's metadata.node).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Node string `json:"node"`
	// NetworkDeviceRef names the NetworkDevice the cards are cabled to (the seed's
	// metadata.networkDevice).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	NetworkDeviceRef string `json:"networkDeviceRef"`
	// NICs are the host's network cards (the seed's "nic").
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	NICs []HostNIC `json:"nics"`
}

// NICAssignment is the network a card carries.
type NICAssignment struct {
	// Network is the name of the ClusterNetwork's network.
	Network string `json:"network"`
	// VLANID is the network's VLAN.
	VLANID int32 `json:"vlanID"`
	// PortMode is how the switch port carries it (access or trunk).
	// +optional
	PortMode PortMode `json:"portMode,omitempty"`
	// Networks lists every network a trunk port carries, tagged, with its VLAN, when it carries
	// more than one (networks of portMode trunk share a host's cards); network and vlanID then
	// name the first of them (the seed's shape).
	// +optional
	Networks []NetworkStatus `json:"networks,omitempty"`
	// LAG is the bond this card is a member of on the switch (a network with linkAggregation 2
	// or more); unset for a card on its own port.
	// +optional
	LAG *CardLAG `json:"lag,omitempty"`
	// ACLs are the access lists of the card's networks bound to its switch port (one per
	// network with acl rules), rules in order.
	// +optional
	ACLs []CardACL `json:"acls,omitempty"`
	// PortStatus is down when a network of the card asks its port shut; unset: up.
	// +optional
	PortStatus PortStatus `json:"portStatus,omitempty"`
}

// CardACL is a network's access list on a card's switch port.
type CardACL struct {
	// Network is the ClusterNetwork's network the list belongs to.
	Network string `json:"network"`
	// Name of the list on the switch.
	Name string `json:"name"`
	// Rules in order, as the ClusterNetwork has them (checked there).
	Rules []CardACLRule `json:"rules,omitempty"`
	// Default is what traffic no rule matched gets.
	Default ACLAction `json:"default"`
}

// CardACLRule is a rule of a card's access list: a ClusterNetwork acl rule as written there.
type CardACLRule struct {
	Direction ACLDirection `json:"direction"`
	Protocol  string       `json:"protocol"`
	Action    ACLAction    `json:"action"`
	// +optional
	Remote string `json:"remote,omitempty"`
}

// CardLAG is the bond a host's card is in.
type CardLAG struct {
	// Name of the bond on the switch (an Open vSwitch port name).
	Name string `json:"name"`
	// Mode is lacp or static.
	Mode LAGMode `json:"mode"`
	// LACPRate is slow or fast (lacp only).
	// +optional
	LACPRate LACPRate `json:"lacpRate,omitempty"`
	// MLAGPair is the NetworkDevice's mlagPairs[].name when the bond spans two switches.
	// +optional
	MLAGPair string `json:"mlagPair,omitempty"`
}

// NICStatus says which ClusterNetwork uses the host and what each card carries.
type NICStatus struct {
	// ClusterNetwork using this host; empty when none.
	// +optional
	ClusterNetwork string `json:"clusterNetwork,omitempty"`
	// NICs, in the order of spec.nics: the network each card carries, or null when unused.
	// +optional
	NICs []*NICAssignment `json:"nics,omitempty"`
}

// NIC lists one host's network cards and the switch ports they are cabled to.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=nics,scope=Namespaced
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Node",type="string",JSONPath=".spec.node",description="BareMetalHost"
// +kubebuilder:printcolumn:name="NetworkDevice",type="string",JSONPath=".spec.networkDeviceRef"
// +kubebuilder:printcolumn:name="ClusterNetwork",type="string",JSONPath=".status.clusterNetwork",description="ClusterNetwork using the host"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type NIC struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec   NICSpec   `json:"spec"`
	Status NICStatus `json:"status,omitempty"`
}

// NICList is a list of NICs.
//
// +kubebuilder:object:root=true
type NICList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NIC `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &NIC{}, &NICList{})
}
