package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PortMode says how a switch port carries a network.
// +kubebuilder:validation:Enum=access;trunk
type PortMode string

const (
	// PortModeAccess carries the network's VLAN untagged.
	PortModeAccess PortMode = "access"
	// PortModeTrunk carries the network's VLAN tagged.
	PortModeTrunk PortMode = "trunk"
)

// HostState is how far a selected host's switch ports are.
type HostState string

const (
	// HostConfiguring: the ports are being configured.
	HostConfiguring HostState = "configuring"
	// HostReady: every port of the host carries its network.
	HostReady HostState = "ready"
	// HostError: a port could not be configured; message says why.
	HostError HostState = "error"
)

// NICHint is what a network needs of a network card.
type NICHint struct {
	// Speed is the lowest acceptable speed in Mb/s; the slowest card that meets it is preferred.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Speed int32 `json:"speed,omitempty"`
	// SmartNIC: the card must be (true) or must not be (false) a SmartNIC.
	// +optional
	SmartNIC bool `json:"smartNIC,omitempty"`
}

// ACLDirection is which way a rule's traffic crosses the host's switch port.
// +kubebuilder:validation:Enum=ingress;egress
type ACLDirection string

const (
	// ACLIngress is what the host sends into the switch.
	ACLIngress ACLDirection = "ingress"
	// ACLEgress is what the switch sends out to the host.
	ACLEgress ACLDirection = "egress"
)

// ACLAction is what a rule does with the traffic it matches.
// +kubebuilder:validation:Enum=allow;deny
type ACLAction string

const (
	ACLAllow ACLAction = "allow"
	ACLDeny  ACLAction = "deny"
)

// ACLRule is a rule of a network's access list, applied on each host's switch ports.
//
// +kubebuilder:validation:XValidation:rule="!self.protocol.matches('^(tcp|udp):[0-9]{1,5}(-[0-9]{1,5})?$') || (int(self.protocol.substring(4).contains('-') ? self.protocol.substring(4, self.protocol.indexOf('-')) : self.protocol.substring(4)) >= 1 && int(self.protocol.substring(4).contains('-') ? self.protocol.substring(self.protocol.indexOf('-') + 1) : self.protocol.substring(4)) <= 65535)",message="protocol ports are numbers from 1 to 65535, e.g. tcp:443 or udp:5000-5100",fieldPath=".protocol"
// +kubebuilder:validation:XValidation:rule="!self.protocol.matches('^(tcp|udp):[0-9]{1,5}-[0-9]{1,5}$') || int(self.protocol.substring(4, self.protocol.indexOf('-'))) <= int(self.protocol.substring(self.protocol.indexOf('-') + 1))",message="protocol's port range starts after it ends; write the lower port first, e.g. tcp:8000-8080",fieldPath=".protocol"
type ACLRule struct {
	// Direction is ingress (what the host sends) or egress (what it receives).
	Direction ACLDirection `json:"direction"`
	// Protocol is all, icmp, ssh, http, https, tcp:N, udp:N, tcp:N-M or udp:N-M (destination
	// ports 1-65535).
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:XValidation:rule="self.matches('^(all|icmp|ssh|http|https|(tcp|udp):[0-9]{1,5}(-[0-9]{1,5})?)$')",message="protocol must be all, icmp, ssh, http, https, tcp:N, udp:N, tcp:N-M or udp:N-M"
	Protocol string `json:"protocol"`
	// Action is allow or deny.
	Action ACLAction `json:"action"`
	// Remote is the CIDR of the other end (ingress: where the host sends to; egress: where the
	// traffic comes from); unset: anywhere.
	// +kubebuilder:validation:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="remote must be a CIDR such as 10.0.0.0/8 or 2001:db8::/32"
	// +kubebuilder:validation:XValidation:rule="!isCIDR(self) || cidr(self).masked() == cidr(self)",message="remote has host bits set; write the network's address, e.g. 10.0.0.0/8 rather than 10.1.2.3/8"
	// +optional
	Remote string `json:"remote,omitempty"`
}

// PortStatus is a network's administrative state on its hosts' switch ports.
// +kubebuilder:validation:Enum=up;down
type PortStatus string

const (
	// PortUp: the ports pass traffic (the default).
	PortUp PortStatus = "up"
	// PortDown: the ports are shut, fencing the hosts from the network without removing them.
	PortDown PortStatus = "down"
)

// LAGMode is how a bond's member links are aggregated.
// +kubebuilder:validation:Enum=lacp;static
type LAGMode string

const (
	// LAGLACP negotiates the bond with LACP (802.3ad): on Open vSwitch lacp=active and
	// bond_mode=balance-tcp; on the host an 802.3ad bond.
	LAGLACP LAGMode = "lacp"
	// LAGStatic bonds without negotiation: on Open vSwitch active-backup with lacp off; on the
	// host an active-backup bond.
	LAGStatic LAGMode = "static"
)

// LACPRate is how often LACP partners send their LACP frames.
// +kubebuilder:validation:Enum=slow;fast
type LACPRate string

const (
	// LACPSlow sends every 30 seconds (the 802.3ad default).
	LACPSlow LACPRate = "slow"
	// LACPFast sends every second: a failed member is noticed within 3 seconds.
	LACPFast LACPRate = "fast"
)

// LAG says how a network's bond is made.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.mode) && self.mode == 'static' && has(self.lacpRate) && self.lacpRate == 'fast')",message="lag.lacpRate fast needs lag.mode lacp: a static bond sends no LACP frames; remove lacpRate or set mode lacp",fieldPath=".lacpRate"
type LAG struct {
	// Mode is lacp (802.3ad, default) or static.
	// +kubebuilder:default=lacp
	// +optional
	Mode LAGMode `json:"mode,omitempty"`
	// LACPRate is slow (default) or fast; fast only with mode lacp.
	// +kubebuilder:default=slow
	// +optional
	LACPRate LACPRate `json:"lacpRate,omitempty"`
}

// Network is one network of a ClusterNetwork.
//
// +kubebuilder:validation:XValidation:rule="!has(self.lag) || (has(self.linkAggregation) && self.linkAggregation >= 2)",message="lag needs linkAggregation 2 or more: a bond is made of several cards; set linkAggregation or remove lag",fieldPath=".lag"
type Network struct {
	// Name of the network, unique in the ClusterNetwork.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Type of the network. Only vlan is supported (vxlan is reserved).
	// +kubebuilder:validation:Enum=vlan
	// +kubebuilder:default=vlan
	// +optional
	Type string `json:"type,omitempty"`
	// VLANID pins the network's VLAN; it must lie in spec.vlanRange. Unset: the controller
	// assigns the lowest free id of the range.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4094
	// +optional
	VLANID *int32 `json:"vlanID,omitempty"`
	// NetworkDeviceType is the kind of device carrying the network. Only switch.
	// +kubebuilder:validation:Enum=switch
	// +kubebuilder:default=switch
	// +optional
	NetworkDeviceType string `json:"networkDeviceType,omitempty"`
	// LinkAggregation is how many network cards of each host carry the network. With 2 or more
	// the cards are one bond (a link aggregation group) on the switch, made as lag says (LACP by
	// default), and a Metal3DataTemplate bond with bondFrom gets the same cards on the host.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=8
	// +kubebuilder:default=1
	// +optional
	LinkAggregation int32 `json:"linkAggregation,omitempty"`
	// LAG is how the bond of a network with linkAggregation 2 or more is made: LACP (802.3ad,
	// the default) or static. Only with linkAggregation 2 or more.
	// +optional
	LAG *LAG `json:"lag,omitempty"`
	// NICHint is what the cards must offer.
	// +optional
	NICHint NICHint `json:"nicHint,omitempty"`
	// ACL rules filter each host's traffic on its switch ports, in order, first match wins; then
	// aclDefault. See docs/fabric.md, "Access lists".
	// +kubebuilder:validation:MaxItems=32
	// +optional
	ACL []ACLRule `json:"acl,omitempty"`
	// ACLDefault is what traffic no acl rule matched gets: allow (default) or deny.
	// +kubebuilder:default=allow
	// +optional
	ACLDefault ACLAction `json:"aclDefault,omitempty"`
	// PortStatus is up (default) or down: down shuts the hosts' ports carrying the network
	// (fencing them) without removing the hosts; a port shared with other networks goes down for
	// all of them.
	// +kubebuilder:default=up
	// +optional
	PortStatus PortStatus `json:"portStatus,omitempty"`
	// PortMode is how the switch ports carry the network: access (untagged, default: the
	// network has cards of its own) or trunk (tagged). Networks of portMode trunk share cards: a
	// trunk network goes first on the host's cards already carrying trunk networks that meet its
	// nicHint, then on free ones, so a host with one card carries every trunk network on it.
	// +kubebuilder:default=access
	// +optional
	PortMode PortMode `json:"portMode,omitempty"`
}

// ClusterNetworkSpec is the networks a cluster's hosts are put in.
//
// +kubebuilder:validation:XValidation:rule="self.networks.all(n, self.networks.exists_one(m, m.name == n.name))",message="network names must be unique in a ClusterNetwork; rename the second network of that name",fieldPath=".networks"
// +kubebuilder:validation:XValidation:rule="!self.vlanRange.matches('^[0-9]{1,4}-[0-9]{1,4}$') || self.networks.all(n, !has(n.vlanID) || (n.vlanID >= int(self.vlanRange.substring(0, self.vlanRange.indexOf('-'))) && n.vlanID <= int(self.vlanRange.substring(self.vlanRange.indexOf('-') + 1))))",message="a pinned networks[].vlanID lies outside vlanRange; pin an id inside the range or widen vlanRange",fieldPath=".networks"
// +kubebuilder:validation:XValidation:rule="self.networks.all(n, !has(n.vlanID) || self.networks.exists_one(m, has(m.vlanID) && m.vlanID == n.vlanID))",message="two networks pin the same vlanID; give each network its own VLAN",fieldPath=".networks"
type ClusterNetworkSpec struct {
	// NetworkDeviceRef names the NetworkDevice whose switches carry the networks (the seed's
	// metadata.netWorkDevice).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	NetworkDeviceRef string `json:"networkDeviceRef"`

	// VLANRange is the inclusive range the networks' VLAN ids come from, "first-last" within
	// 1-4094, e.g. "1000-1999".
	// +kubebuilder:validation:MaxLength=9
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9]{1,4}-[0-9]{1,4}$')",message="vlanRange must read first-last, e.g. 1000-1999"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[0-9]{1,4}-[0-9]{1,4}$') || (int(self.substring(0, self.indexOf('-'))) >= 1 && int(self.substring(self.indexOf('-') + 1)) <= 4094)",message="vlanRange must lie within 1-4094, the VLAN ids a switch accepts"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[0-9]{1,4}-[0-9]{1,4}$') || int(self.substring(0, self.indexOf('-'))) <= int(self.substring(self.indexOf('-') + 1))",message="vlanRange starts after it ends; write the lower id first"
	VLANRange string `json:"vlanRange"`

	// Networks are the networks each host is put in (the seed's "network").
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Networks []Network `json:"networks"`
}

// NetworkStatus is the VLAN assigned to a network.
type NetworkStatus struct {
	Name   string `json:"name"`
	VLANID int32  `json:"vlanID"`
}

// HostNetworkState is the state of a selected host's switch ports.
type HostNetworkState struct {
	// NIC is the name of the host's NIC object.
	NIC string `json:"nic"`
	// State is configuring, ready or error.
	State HostState `json:"state"`
	// Message says why the state is error (or what is awaited).
	// +optional
	Message string `json:"message,omitempty"`
}

// ClusterNetworkStatus is what the controller assigned and how far each host is.
type ClusterNetworkStatus struct {
	// Networks with their assigned VLAN ids.
	// +optional
	Networks []NetworkStatus `json:"networks,omitempty"`
	// Available maps each host that can join (it is free and has cards meeting every network's
	// nicHint) to its NIC object. Atomic: one writer, the controller, owns it whole (a map
	// of a thousand hosts would otherwise add one managedFields entry per host).
	// +mapType=atomic
	// +optional
	Available map[string]string `json:"available,omitempty"`
	// Selected lists the hosts that have joined (selected by a Metal3Machine).
	// +optional
	Selected []string `json:"selected,omitempty"`
	// States maps each selected host to how far its switch ports are. Atomic, as available.
	// +mapType=atomic
	// +optional
	States map[string]HostNetworkState `json:"states,omitempty"`
	// Conditions: Ready, VLANsAssigned, NICsValid.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ClusterNetwork is the set of networks (VLANs) a cluster's hosts are put in on the switches
// of one NetworkDevice.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusternetworks,scope=Namespaced,shortName=cn
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="NetworkDevice",type="string",JSONPath=".spec.networkDeviceRef"
// +kubebuilder:printcolumn:name="VLANs",type="string",JSONPath=".spec.vlanRange"
// +kubebuilder:printcolumn:name="Selected",type="integer",JSONPath=".status.selected.length()"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type ClusterNetwork struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec   ClusterNetworkSpec   `json:"spec"`
	Status ClusterNetworkStatus `json:"status,omitempty"`
}

// ClusterNetworkList is a list of ClusterNetworks.
//
// +kubebuilder:object:root=true
type ClusterNetworkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterNetwork `json:"items"`
}

// GetConditions returns the ClusterNetwork's conditions.
func (c *ClusterNetwork) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions replaces the ClusterNetwork's conditions.
func (c *ClusterNetwork) SetConditions(conds []metav1.Condition) { c.Status.Conditions = conds }

func init() {
	objectTypes = append(objectTypes, &ClusterNetwork{}, &ClusterNetworkList{})
}
