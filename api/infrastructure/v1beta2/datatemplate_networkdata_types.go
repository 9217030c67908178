package v1beta2

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// The networkData part of a Metal3DataTemplate: a template of OpenStack network_data.json
// (links, networks, services). JSON names are CAPM3's v1beta2 names; the seed-era inline
// address ({start, end, subnet, step} computed from the index) is accepted as an addition.

// NetworkData is a template of network_data.json.
//
// The cross-reference rules below are checked at admission so a typo in a link id is refused when
// the template is applied, not found when the first host fails to render. The API server cannot
// list the ids that exist in a message; the renderer repeats the checks and does.
// +kubebuilder:validation:XValidation:rule="!has(self.networks) || ((!has(self.networks.ipv4) || self.networks.ipv4.all(n, has(self.links) && ((has(self.links.ethernets) && self.links.ethernets.exists(k, k.id == n.link)) || (has(self.links.bonds) && self.links.bonds.exists(k, k.id == n.link)) || (has(self.links.bridges) && self.links.bridges.exists(k, k.id == n.link)) || (has(self.links.vlans) && self.links.vlans.exists(k, k.id == n.link))))) && (!has(self.networks.ipv6) || self.networks.ipv6.all(n, has(self.links) && ((has(self.links.ethernets) && self.links.ethernets.exists(k, k.id == n.link)) || (has(self.links.bonds) && self.links.bonds.exists(k, k.id == n.link)) || (has(self.links.bridges) && self.links.bridges.exists(k, k.id == n.link)) || (has(self.links.vlans) && self.links.vlans.exists(k, k.id == n.link))))) && (!has(self.networks.ipv4DHCP) || self.networks.ipv4DHCP.all(n, has(self.links) && ((has(self.links.ethernets) && self.links.ethernets.exists(k, k.id == n.link)) || (has(self.links.bonds) && self.links.bonds.exists(k, k.id == n.link)) || (has(self.links.bridges) && self.links.bridges.exists(k, k.id == n.link)) || (has(self.links.vlans) && self.links.vlans.exists(k, k.id == n.link))))) && (!has(self.networks.ipv6DHCP) || self.networks.ipv6DHCP.all(n, has(self.links) && ((has(self.links.ethernets) && self.links.ethernets.exists(k, k.id == n.link)) || (has(self.links.bonds) && self.links.bonds.exists(k, k.id == n.link)) || (has(self.links.bridges) && self.links.bridges.exists(k, k.id == n.link)) || (has(self.links.vlans) && self.links.vlans.exists(k, k.id == n.link))))) && (!has(self.networks.ipv6SLAAC) || self.networks.ipv6SLAAC.all(n, has(self.links) && ((has(self.links.ethernets) && self.links.ethernets.exists(k, k.id == n.link)) || (has(self.links.bonds) && self.links.bonds.exists(k, k.id == n.link)) || (has(self.links.bridges) && self.links.bridges.exists(k, k.id == n.link)) || (has(self.links.vlans) && self.links.vlans.exists(k, k.id == n.link))))))",message="every network's link must name a link in networkData.links (the id of an ethernet, bond, bridge or vlan); add the link or fix the id",fieldPath=".networks"
type NetworkData struct {
	// links are the layer 2 interfaces: ethernets, bonds, bridges and VLANs.
	// +optional
	Links *NetworkDataLinks `json:"links,omitempty"`

	// networks are the layer 3 configurations of the links.
	// +optional
	Networks *NetworkDataNetworks `json:"networks,omitempty"`

	// services are the host-wide services (DNS servers).
	// +optional
	Services *NetworkDataService `json:"services,omitempty"`
}

// NetworkDataLinks lists the layer 2 interfaces. Link ids are unique across all four lists
// (each list's own uniqueness is its list-map key), and bonds, bridges and VLANs name their
// members and parents by those ids.
// +kubebuilder:validation:XValidation:rule="(!has(self.ethernets) || !has(self.bonds) || self.ethernets.all(x, !self.bonds.exists(y, y.id == x.id))) && (!has(self.ethernets) || !has(self.bridges) || self.ethernets.all(x, !self.bridges.exists(y, y.id == x.id))) && (!has(self.ethernets) || !has(self.vlans) || self.ethernets.all(x, !self.vlans.exists(y, y.id == x.id))) && (!has(self.bonds) || !has(self.bridges) || self.bonds.all(x, !self.bridges.exists(y, y.id == x.id))) && (!has(self.bonds) || !has(self.vlans) || self.bonds.all(x, !self.vlans.exists(y, y.id == x.id))) && (!has(self.bridges) || !has(self.vlans) || self.bridges.all(x, !self.vlans.exists(y, y.id == x.id)))",message="link ids must be unique across ethernets, bonds, bridges and vlans; rename one of the links that share an id"
// +kubebuilder:validation:XValidation:rule="!has(self.bonds) || self.bonds.all(b, !has(b.bondLinks) || b.bondLinks.all(m, has(self.ethernets) && self.ethernets.exists(k, k.id == m)))",message="every bondLinks entry must name an ethernet in networkData.links (bonds aggregate Ethernet interfaces); add the ethernet or fix the id",fieldPath=".bonds"
// +kubebuilder:validation:XValidation:rule="!has(self.bridges) || self.bridges.all(b, !has(b.bridgeLinks) || b.bridgeLinks.all(m, ((has(self.ethernets) && self.ethernets.exists(k, k.id == m)) || (has(self.bonds) && self.bonds.exists(k, k.id == m)) || (has(self.vlans) && self.vlans.exists(k, k.id == m)))))",message="every bridgeLinks entry must name an ethernet, bond or vlan in networkData.links; add the link or fix the id",fieldPath=".bridges"
// +kubebuilder:validation:XValidation:rule="!has(self.vlans) || self.vlans.all(v, v.vlanLink != v.id && ((has(self.ethernets) && self.ethernets.exists(k, k.id == v.vlanLink)) || (has(self.bonds) && self.bonds.exists(k, k.id == v.vlanLink)) || (has(self.bridges) && self.bridges.exists(k, k.id == v.vlanLink)) || (has(self.vlans) && self.vlans.exists(k, k.id == v.vlanLink))))",message="every vlanLink must name another link in networkData.links (the id of an ethernet, bond, bridge or vlan); add the link or fix the id",fieldPath=".vlans"
type NetworkDataLinks struct {
	// ethernets are physical or virtual Ethernet interfaces.
	// +optional
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MaxItems=64
	Ethernets []NetworkDataLinkEthernet `json:"ethernets,omitzero"`

	// bonds aggregate other links.
	// +optional
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MaxItems=64
	Bonds []NetworkDataLinkBond `json:"bonds,omitzero"`

	// bridges are Linux bridges over other links.
	// +optional
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MaxItems=16
	Bridges []NetworkDataLinkBridge `json:"bridges,omitzero"`

	// vlans are 802.1Q VLAN interfaces on another link.
	// +optional
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MaxItems=64
	Vlans []NetworkDataLinkVlan `json:"vlans,omitzero"`
}

// MTU is a link's maximum transmission unit in bytes.
// +kubebuilder:validation:Minimum=1280
// +kubebuilder:validation:Maximum=9000
type MTU int32

// LinkID names a link in network_data.json; networks, bonds and VLANs refer to links by it.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=64
type LinkID string

// InterfaceName is the name cloud-init gives the interface, as Linux allows it.
// +kubebuilder:validation:MaxLength=15
// +kubebuilder:validation:Pattern=`^[a-zA-Z][a-zA-Z0-9._-]*$`
type InterfaceName string

// NetworkLinkEthernetMac says where a link's MAC address comes from: exactly one source.
// fromBootMAC is metalwire's addition: a freshly registered host has no hardware details yet, so
// pre-provisioning templates need the one MAC the host is registered with.
// +kubebuilder:validation:XValidation:rule="(has(self.string) ? 1 : 0) + (has(self.fromHostInterface) ? 1 : 0) + (has(self.fromAnnotation) ? 1 : 0) + ((has(self.fromBootMAC) && self.fromBootMAC) ? 1 : 0) == 1",message="set exactly one of string, fromHostInterface, fromAnnotation or fromBootMAC: true"
type NetworkLinkEthernetMac struct {
	// string is the MAC address itself.
	// +optional
	String *MACAddress `json:"string,omitempty"`

	// fromHostInterface names a NIC in the host's status.hardware.nics whose MAC to use.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	FromHostInterface *string `json:"fromHostInterface,omitempty"`

	// fromAnnotation reads the MAC from an annotation of the Machine, Metal3Machine or host.
	// +optional
	FromAnnotation *NetworkLinkEthernetMacFromAnnotation `json:"fromAnnotation,omitempty"`

	// fromBootMAC uses the host's spec.bootMACAddress (metalwire addition).
	// +optional
	FromBootMAC *bool `json:"fromBootMAC,omitempty"`
}

// NetworkLinkEthernetMacFromAnnotation names an annotation holding a MAC address.
type NetworkLinkEthernetMacFromAnnotation struct {
	// object is whose annotation to read: machine, metal3machine or baremetalhost.
	// +kubebuilder:validation:Enum=machine;metal3machine;baremetalhost
	Object string `json:"object"`
	// annotation is the annotation key.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	Annotation string `json:"annotation"`
}

// NetworkDataLinkEthernet is an Ethernet interface.
type NetworkDataLinkEthernet struct {
	// type is the interface type, as network_data.json names it.
	// +kubebuilder:validation:Enum=bridge;dvs;hw_veb;hyperv;ovs;tap;vhostuser;vif;phy
	Type string `json:"type"`

	// id names the link.
	ID LinkID `json:"id"`

	// name is the interface name cloud-init gives the NIC with this MAC address.
	// +optional
	Name InterfaceName `json:"name,omitempty"`

	// mtu of the interface.
	// +kubebuilder:default=1500
	// +optional
	MTU MTU `json:"mtu,omitempty"`

	// macAddress says where the interface's MAC address comes from.
	MACAddress *NetworkLinkEthernetMac `json:"macAddress"`
}

// NetworkDataLinkBond is a bond of other links.
// +kubebuilder:validation:XValidation:rule="has(self.bondLinks) != has(self.bondFrom)",message="give exactly one of bondLinks (the ids of the member links) and bondFrom (the cards a ClusterNetwork bonded on the switch)"
// +kubebuilder:validation:XValidation:rule="has(self.bondFrom) || has(self.bondMode)",message="bondMode is required with bondLinks; give the bonding mode (802.3ad, active-backup, ...)",fieldPath=".bondMode"
// +kubebuilder:validation:XValidation:rule="!has(self.bondFrom) || !has(self.bondMode)",message="bondFrom takes the bonding mode from the ClusterNetwork network's lag.mode (lacp: 802.3ad, static: active-backup); remove bondMode",fieldPath=".bondMode"
type NetworkDataLinkBond struct {
	// bondMode is the bonding mode. Required with bondLinks; with bondFrom it comes from the
	// fabric and is not given.
	// +kubebuilder:validation:Enum="balance-rr";"active-backup";"balance-xor";"broadcast";"balance-tlb";"balance-alb";"802.3ad"
	// +optional
	BondMode string `json:"bondMode,omitempty"`

	// bondXmitHashPolicy selects the transmit hash policy of balance-xor and 802.3ad bonds.
	// +kubebuilder:validation:Enum="layer2";"layer3+4";"layer2+3"
	// +optional
	BondXmitHashPolicy string `json:"bondXmitHashPolicy,omitempty"`

	// id names the link.
	ID LinkID `json:"id"`

	// name is the interface name cloud-init gives the bond.
	// +optional
	Name InterfaceName `json:"name,omitempty"`

	// mtu of the bond.
	// +kubebuilder:default=1500
	// +optional
	MTU MTU `json:"mtu,omitempty"`

	// macAddress of the bond; the first member's MAC when unset.
	// +optional
	MACAddress *NetworkLinkEthernetMac `json:"macAddress,omitempty"`

	// parameters are extra bond settings written as bond_<name> in network_data.json.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	Parameters []NetworkDataLinkBondParam `json:"parameters,omitzero"`

	// bondLinks are the ids of the member links. Exactly one of bondLinks and bondFrom is set.
	// +kubebuilder:validation:MinItems=1
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +optional
	BondLinks []LinkID `json:"bondLinks,omitzero"`

	// bondFrom takes the bond's members and mode from a ClusterNetwork (network.metalwire.io):
	// the host's cards its controller bonded on the switch for the network (linkAggregation 2
	// or more), by MAC, each rendered as a phy link of id <bond id>-<n>, and its lag.mode
	// (lacp: 802.3ad with lacp_rate; static: active-backup). The Metal3Data waits until the
	// host's cards are given the network.
	// +optional
	BondFrom *BondSource `json:"bondFrom,omitempty"`
}

// BondSource names a network of a ClusterNetwork whose bond a host-side bond follows.
type BondSource struct {
	// clusterNetwork is the name of a ClusterNetwork in the template's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ClusterNetwork string `json:"clusterNetwork"`

	// network is the name of one of the ClusterNetwork's spec.networks, with linkAggregation
	// 2 or more.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Network string `json:"network"`
}

// NetworkDataLinkBondParam is one extra bond setting, passed through as is.
type NetworkDataLinkBondParam struct {
	// name of the setting, without the bond_ prefix (miimon, lacp_rate, ...).
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// value of the setting: any JSON value.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Value *apiextensionsv1.JSON `json:"value,omitempty"`
}

// NetworkDataLinkBridge is a Linux bridge over other links.
type NetworkDataLinkBridge struct {
	// id names the link.
	ID LinkID `json:"id"`

	// name is the interface name cloud-init gives the bridge.
	// +optional
	Name InterfaceName `json:"name,omitempty"`

	// mtu of the bridge.
	// +kubebuilder:default=1500
	// +optional
	MTU MTU `json:"mtu,omitempty"`

	// macAddress of the bridge; the first member's MAC when unset.
	// +optional
	MACAddress *NetworkLinkEthernetMac `json:"macAddress,omitempty"`

	// bridgeLinks are the ids of the member links.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	BridgeLinks []LinkID `json:"bridgeLinks,omitzero"`

	// acceptRA controls IPv6 router advertisements on the bridge; unset leaves the default.
	// +optional
	AcceptRA *bool `json:"acceptRA,omitempty"`

	// parameters are extra bridge settings, passed through as is.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	Parameters []NetworkDataLinkBridgeParam `json:"parameters,omitzero"`
}

// NetworkDataLinkBridgeParam is one extra bridge setting.
type NetworkDataLinkBridgeParam struct {
	// name of the setting, without the bridge_ prefix.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// value of the setting: any JSON value.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Value *apiextensionsv1.JSON `json:"value,omitempty"`
}

// NetworkDataLinkVlan is an 802.1Q VLAN interface on another link.
// +kubebuilder:validation:XValidation:rule="has(self.vlanID) != has(self.vlanIDFrom)",message="give exactly one of vlanID (a fixed VLAN tag) and vlanIDFrom (the VLAN a ClusterNetwork assigned to one of its networks)"
type NetworkDataLinkVlan struct {
	// vlanID is the VLAN tag. Exactly one of vlanID and vlanIDFrom is set.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=4094
	// +optional
	VlanID *int32 `json:"vlanID,omitempty"`

	// vlanIDFrom takes the VLAN tag from a ClusterNetwork (network.metalwire.io): the VLAN id
	// its controller assigned to one of its networks (status.networks[].vlanID), the VLAN the
	// host's switch ports carry. The Metal3Data waits until the id is assigned.
	// +optional
	VlanIDFrom *VLANIDSource `json:"vlanIDFrom,omitempty"`

	// id names the link.
	ID LinkID `json:"id"`

	// name is the interface name cloud-init gives the VLAN interface.
	// +optional
	Name InterfaceName `json:"name,omitempty"`

	// mtu of the VLAN interface.
	// +kubebuilder:default=1500
	// +optional
	MTU MTU `json:"mtu,omitempty"`

	// macAddress of the VLAN interface; the parent link's MAC when unset.
	// +optional
	MACAddress *NetworkLinkEthernetMac `json:"macAddress,omitempty"`

	// vlanLink is the id of the link the VLAN is on.
	VlanLink LinkID `json:"vlanLink"`
}

// VLANIDSource names the ClusterNetwork network whose assigned VLAN id a VLAN link takes.
type VLANIDSource struct {
	// clusterNetwork is the name of a ClusterNetwork in the template's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ClusterNetwork string `json:"clusterNetwork"`

	// network is the name of one of the ClusterNetwork's spec.networks.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Network string `json:"network"`
}

// NetworkDataNetworks lists the layer 3 configurations.
type NetworkDataNetworks struct {
	// ipv4 are static IPv4 configurations.
	// +optional
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MaxItems=64
	IPv4 []NetworkDataIPv4 `json:"ipv4,omitzero"`

	// ipv6 are static IPv6 configurations.
	// +optional
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MaxItems=64
	IPv6 []NetworkDataIPv6 `json:"ipv6,omitzero"`

	// ipv4DHCP are links configured by DHCPv4.
	// +optional
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MaxItems=64
	IPv4DHCP []NetworkDataIPv4DHCP `json:"ipv4DHCP,omitzero"`

	// ipv6DHCP are links configured by DHCPv6.
	// +optional
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MaxItems=64
	IPv6DHCP []NetworkDataIPv6DHCP `json:"ipv6DHCP,omitzero"`

	// ipv6SLAAC are links configured by stateless address autoconfiguration.
	// +optional
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MaxItems=64
	IPv6SLAAC []NetworkDataIPv6DHCP `json:"ipv6SLAAC,omitzero"`
}

// IPPoolReference names a pool of any IPAM provider.
type IPPoolReference struct {
	// name of the pool, in the template's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
	// kind of the pool, such as IPPool or InClusterIPPool; IPPool when unset (as upstream).
	// +kubebuilder:default=IPPool
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$`
	// +optional
	Kind string `json:"kind,omitempty"`
	// apiGroup of the pool, such as ipam.cluster.x-k8s.io; ipam.metal3.io when unset (as upstream).
	// +kubebuilder:default=ipam.metal3.io
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	APIGroup string `json:"apiGroup,omitempty"`
}

// FromPoolAnnotation reads a pool name from an annotation of the Machine, Metal3Machine or host.
// When set, it overrides the other pool references of the same item.
type FromPoolAnnotation struct {
	// object is whose annotation to read: machine, metal3machine or baremetalhost.
	// +kubebuilder:validation:Enum=machine;metal3machine;baremetalhost
	Object string `json:"object"`
	// annotation is the key of the annotation holding the pool name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	Annotation string `json:"annotation"`
}

// NetworkDataIPAddress is the seed-era address computed from the Metal3Data index:
// start + index*step, refused past end or outside subnet. Without start, the first address is
// the subnet's second.
// +kubebuilder:validation:XValidation:rule="has(self.start) || has(self.subnet)",message="needs start or subnet: give the first address to hand out, or the subnet to take it from"
type NetworkDataIPAddress struct {
	// start is the address of index 0.
	// +optional
	Start *IPAddress `json:"start,omitempty"`
	// end is the last address that may be used.
	// +optional
	End *IPAddress `json:"end,omitempty"`
	// subnet bounds the addresses and gives their prefix.
	// +optional
	Subnet *IPSubnet `json:"subnet,omitempty"`
	// step is the distance between the addresses of consecutive indexes; 1 when unset.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	Step int32 `json:"step,omitempty"`
}

// NetworkDataIPv4 is a static IPv4 configuration of a link. The address comes from exactly one
// of ipAddressFromIPPool, fromPoolRef or ipAddress; fromPoolAnnotation may name the pool
// instead, and then wins. An empty ipAddressFromIPPool counts as unset: CAPM3 serialises its
// IPv6 type with ipAddressFromIPPool: "" beside fromPoolRef, and such manifests must apply.
// +kubebuilder:validation:XValidation:rule="has(self.fromPoolAnnotation) || (has(self.ipAddressFromIPPool) && size(self.ipAddressFromIPPool) > 0 ? 1 : 0) + (has(self.fromPoolRef) ? 1 : 0) + (has(self.ipAddress) ? 1 : 0) == 1",message="set exactly one address source: ipAddressFromIPPool, fromPoolRef, fromPoolAnnotation or ipAddress"
type NetworkDataIPv4 struct {
	// id names the network.
	// +kubebuilder:validation:MinLength=1
	ID string `json:"id"`

	// link is the id of the link the network is on.
	Link LinkID `json:"link"`

	// ipAddressFromIPPool names an ipam.metal3.io IPPool to take the address from.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	IPAddressFromIPPool string `json:"ipAddressFromIPPool,omitempty"`

	// fromPoolRef names a pool of any IPAM provider to take the address from.
	// +optional
	FromPoolRef *IPPoolReference `json:"fromPoolRef,omitempty"`

	// fromPoolAnnotation reads the pool name from an annotation.
	// +optional
	FromPoolAnnotation *FromPoolAnnotation `json:"fromPoolAnnotation,omitempty"`

	// ipAddress computes the address from the index, without a pool (seed-era).
	// +optional
	IPAddress *NetworkDataIPAddress `json:"ipAddress,omitempty"`

	// netmask is the prefix length of an ipAddress without subnet (seed-era).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=32
	// +optional
	Netmask *int32 `json:"netmask,omitempty"`

	// routes of the network.
	// +optional
	// +listType=map
	// +listMapKey=network
	// +kubebuilder:validation:MaxItems=32
	Routes []NetworkDataRoutev4 `json:"routes,omitzero"`
}

// NetworkDataIPv6 is a static IPv6 configuration of a link, with the same address sources as
// NetworkDataIPv4.
// +kubebuilder:validation:XValidation:rule="has(self.fromPoolAnnotation) || (has(self.ipAddressFromIPPool) && size(self.ipAddressFromIPPool) > 0 ? 1 : 0) + (has(self.fromPoolRef) ? 1 : 0) + (has(self.ipAddress) ? 1 : 0) == 1",message="set exactly one address source: ipAddressFromIPPool, fromPoolRef, fromPoolAnnotation or ipAddress"
type NetworkDataIPv6 struct {
	// id names the network.
	// +kubebuilder:validation:MinLength=1
	ID string `json:"id"`

	// link is the id of the link the network is on.
	Link LinkID `json:"link"`

	// ipAddressFromIPPool names an ipam.metal3.io IPPool to take the address from.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	IPAddressFromIPPool string `json:"ipAddressFromIPPool,omitempty"`

	// fromPoolRef names a pool of any IPAM provider to take the address from.
	// +optional
	FromPoolRef *IPPoolReference `json:"fromPoolRef,omitempty"`

	// fromPoolAnnotation reads the pool name from an annotation.
	// +optional
	FromPoolAnnotation *FromPoolAnnotation `json:"fromPoolAnnotation,omitempty"`

	// ipAddress computes the address from the index, without a pool (seed-era).
	// +optional
	IPAddress *NetworkDataIPAddress `json:"ipAddress,omitempty"`

	// netmask is the prefix length of an ipAddress without subnet (seed-era).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=128
	// +optional
	Netmask *int32 `json:"netmask,omitempty"`

	// routes of the network.
	// +optional
	// +listType=map
	// +listMapKey=network
	// +kubebuilder:validation:MaxItems=32
	Routes []NetworkDataRoutev6 `json:"routes,omitzero"`
}

// NetworkDataIPv4DHCP is a link configured by DHCPv4.
type NetworkDataIPv4DHCP struct {
	// id names the network.
	// +kubebuilder:validation:MinLength=1
	ID string `json:"id"`
	// link is the id of the link the network is on.
	Link LinkID `json:"link"`
	// routes of the network.
	// +optional
	// +listType=map
	// +listMapKey=network
	// +kubebuilder:validation:MaxItems=32
	Routes []NetworkDataRoutev4 `json:"routes,omitzero"`
}

// NetworkDataIPv6DHCP is a link configured by DHCPv6 or SLAAC.
type NetworkDataIPv6DHCP struct {
	// id names the network.
	// +kubebuilder:validation:MinLength=1
	ID string `json:"id"`
	// link is the id of the link the network is on.
	Link LinkID `json:"link"`
	// routes of the network.
	// +optional
	// +listType=map
	// +listMapKey=network
	// +kubebuilder:validation:MaxItems=32
	Routes []NetworkDataRoutev6 `json:"routes,omitzero"`
}
