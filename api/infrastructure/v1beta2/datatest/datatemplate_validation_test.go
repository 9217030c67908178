package datatest

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// templateCase breaks one rule in validTemplate.
type templateCase struct {
	name    string
	given   func(*infrav1.Metal3DataTemplate)
	field   string
	message string
}

const (
	eth0    = "spec.networkData.links.ethernets[0]"
	ipv4    = "spec.networkData.networks.ipv4[0]"
	ipv6    = "spec.networkData.networks.ipv6[0]"
	route4  = ipv4 + ".routes[0]"
	route6  = ipv6 + ".routes[0]"
	macMsg  = "set exactly one of string, fromHostInterface, fromAnnotation or fromBootMAC: true"
	addrMsg = "set exactly one address source: ipAddressFromIPPool, fromPoolRef, fromPoolAnnotation or ipAddress"
	gwMsg   = "set exactly one gateway source: string, fromIPPool, fromPoolRef or fromPoolAnnotation"
)

var metaDataRefusals = []templateCase{
	{
		name:  "empty metaData key",
		given: func(m *infrav1.Metal3DataTemplate) { m.Spec.MetaData.Strings[0].Key = "" },
		field: "spec.metaData.strings[0].key", message: "should be at least 1 chars long",
	},
	{
		name:  "objectNames object outside the enum",
		given: func(m *infrav1.Metal3DataTemplate) { m.Spec.MetaData.ObjectNames[0].Object = "node" },
		field: "spec.metaData.objectNames[0].object", message: `Unsupported value: "node"`,
	},
	{
		name:  "index step below 1", // 0 is omitted from the JSON and defaults to 1
		given: func(m *infrav1.Metal3DataTemplate) { m.Spec.MetaData.Indexes[0].Step = -1 },
		field: "spec.metaData.indexes[0].step", message: "should be greater than or equal to 1",
	},
	{
		name: "ipAddresses without start or subnet",
		given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.MetaData.IPAddresses[0].Subnet = nil
			m.Spec.MetaData.IPAddresses[0].End = ptrTo(infrav1.IPAddress("192.168.10.99"))
		},
		field: "spec.metaData.ipAddresses[0]", message: "needs start or subnet: give the first address to hand out, or the subnet to take it from",
	},
	{
		name: "ipAddresses start not an address",
		given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.MetaData.IPAddresses[0].Start = ptrTo(infrav1.IPAddress("192.168.10.300"))
		},
		field: "spec.metaData.ipAddresses[0].start", message: "must be an IPv4 or IPv6 address, such as 192.168.0.10 or 2001:db8::10",
	},
	{
		name: "ipAddresses subnet prefix too long",
		given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.MetaData.IPAddresses[0].Subnet = ptrTo(infrav1.IPSubnet("192.168.10.0/33"))
		},
		field: "spec.metaData.ipAddresses[0].subnet", message: "must be a subnet in CIDR notation, such as 192.168.0.0/24 or 2001:db8::/64",
	},
	{
		name:  "fromHostInterfaces with neither interface nor fromBootMAC",
		given: func(m *infrav1.Metal3DataTemplate) { m.Spec.MetaData.FromHostInterfaces[0].Interface = "" },
		field: "spec.metaData.fromHostInterfaces[0]", message: "set exactly one of interface (a NIC name from the host's hardware details) or fromBootMAC: true",
	},
	{
		name:  "fromHostInterfaces with both interface and fromBootMAC",
		given: func(m *infrav1.Metal3DataTemplate) { m.Spec.MetaData.FromHostInterfaces[0].FromBootMAC = ptr.To(true) },
		field: "spec.metaData.fromHostInterfaces[0]", message: "set exactly one of interface (a NIC name from the host's hardware details) or fromBootMAC: true",
	},
	{
		name:  "fromLabels without a label",
		given: func(m *infrav1.Metal3DataTemplate) { m.Spec.MetaData.FromLabels[0].Label = "" },
		field: "spec.metaData.fromLabels[0].label", message: "should be at least 1 chars long",
	},
	{
		name:  "fromPool without a pool name",
		given: func(m *infrav1.Metal3DataTemplate) { m.Spec.MetaData.IPAddressesFromPool[0].Name = "" },
		field: "spec.metaData.ipAddressesFromPool[0].name", message: "should be at least 1 chars long",
	},
}

var linkRefusals = []templateCase{
	{
		name: "MAC address not six hex pairs",
		given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.NetworkData.Links.Ethernets[0].MACAddress = &infrav1.NetworkLinkEthernetMac{String: ptrTo(infrav1.MACAddress("00:11:22:33:44"))}
		},
		field: eth0 + ".macAddress.string", message: "should match '^([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}$'",
	},
	{
		name: "MAC address with no source",
		given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.NetworkData.Links.Ethernets[0].MACAddress = &infrav1.NetworkLinkEthernetMac{}
		},
		field: eth0 + ".macAddress", message: macMsg,
	},
	{
		name: "MAC address with two sources",
		given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.NetworkData.Links.Ethernets[0].MACAddress.String = ptrTo(infrav1.MACAddress("00:11:22:33:44:55"))
		},
		field: eth0 + ".macAddress", message: macMsg,
	},
	{
		name: "fromBootMAC next to fromHostInterface",
		given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.NetworkData.Links.Ethernets[0].MACAddress.FromBootMAC = ptr.To(true)
		},
		field: eth0 + ".macAddress", message: macMsg,
	},
	{
		name:  "ethernet without macAddress",
		given: func(m *infrav1.Metal3DataTemplate) { m.Spec.NetworkData.Links.Ethernets[0].MACAddress = nil },
		field: eth0 + ".macAddress", message: "Required value",
	},
	{
		name:  "ethernet type outside the network_data.json enum",
		given: func(m *infrav1.Metal3DataTemplate) { m.Spec.NetworkData.Links.Ethernets[0].Type = "ethernet" },
		field: eth0 + ".type", message: `Unsupported value: "ethernet"`,
	},
	{
		name:  "MTU below 1280 (upstream's minimum)",
		given: func(m *infrav1.Metal3DataTemplate) { m.Spec.NetworkData.Links.Ethernets[0].MTU = 1279 },
		field: eth0 + ".mtu", message: "should be greater than or equal to 1280",
	},
	{
		name:  "MTU above 9000",
		given: func(m *infrav1.Metal3DataTemplate) { m.Spec.NetworkData.Links.Ethernets[0].MTU = 9001 },
		field: eth0 + ".mtu", message: "should be less than or equal to 9000",
	},
	{
		name:  "interface name Linux would refuse",
		given: func(m *infrav1.Metal3DataTemplate) { m.Spec.NetworkData.Links.Ethernets[0].Name = "0eth" },
		field: eth0 + ".name", message: "should match '^[a-zA-Z][a-zA-Z0-9._-]*$'",
	},
	{
		name:  "interface name longer than 15 characters",
		given: func(m *infrav1.Metal3DataTemplate) { m.Spec.NetworkData.Links.Ethernets[0].Name = "provisioning-nic0" },
		field: eth0 + ".name", message: "may not be more than 15 bytes",
	},
	{
		name: "MAC fromAnnotation of an unknown object",
		given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.NetworkData.Links.Ethernets[0].MACAddress = &infrav1.NetworkLinkEthernetMac{
				FromAnnotation: &infrav1.NetworkLinkEthernetMacFromAnnotation{Object: "node", Annotation: "mac"},
			}
		},
		field: eth0 + ".macAddress.fromAnnotation.object", message: `Unsupported value: "node"`,
	},
	{
		name: "bond mode outside the enum",
		given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1"), ethernet("eno2")},
			Bonds:     []infrav1.NetworkDataLinkBond{{ID: "bond0", BondMode: "lacp", BondLinks: []infrav1.LinkID{"eno2"}}},
		}),
		field: "spec.networkData.links.bonds[0].bondMode", message: `Unsupported value: "lacp"`,
	},
	{
		name: "bond transmit hash policy outside the enum",
		given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1"), ethernet("eno2")},
			Bonds: []infrav1.NetworkDataLinkBond{{
				ID: "bond0", BondMode: "802.3ad", BondXmitHashPolicy: "layer3", BondLinks: []infrav1.LinkID{"eno2"},
			}},
		}),
		field: "spec.networkData.links.bonds[0].bondXmitHashPolicy", message: `Unsupported value: "layer3"`,
	},
	{
		name: "bond without members",
		given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1")},
			Bonds:     []infrav1.NetworkDataLinkBond{{ID: "bond0", BondMode: "active-backup", BondLinks: []infrav1.LinkID{}}},
		}),
		field: "spec.networkData.links.bonds[0].bondLinks", message: "should have at least 1 items",
	},
	{
		name: "bond with neither bondLinks nor bondFrom",
		given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1")},
			Bonds:     []infrav1.NetworkDataLinkBond{{ID: "bond0", BondMode: "active-backup"}},
		}),
		field: "spec.networkData.links.bonds[0]", message: "give exactly one of bondLinks (the ids of the member links) and bondFrom (the cards a ClusterNetwork bonded on the switch)",
	},
	{
		name: "bond with both bondLinks and bondFrom",
		given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1"), ethernet("eno2")},
			Bonds: []infrav1.NetworkDataLinkBond{{ID: "bond0", BondLinks: []infrav1.LinkID{"eno2"},
				BondFrom: &infrav1.BondSource{ClusterNetwork: "prod", Network: "control"}}},
		}),
		field: "spec.networkData.links.bonds[0]", message: "give exactly one of bondLinks (the ids of the member links) and bondFrom",
	},
	{
		name: "bondFrom with a bondMode",
		given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1")},
			Bonds: []infrav1.NetworkDataLinkBond{{ID: "bond0", BondMode: "active-backup",
				BondFrom: &infrav1.BondSource{ClusterNetwork: "prod", Network: "control"}}},
		}),
		field: "spec.networkData.links.bonds[0].bondMode", message: "bondFrom takes the bonding mode from the ClusterNetwork network's lag.mode (lacp: 802.3ad, static: active-backup); remove bondMode",
	},
	{
		name: "bondLinks without a bondMode",
		given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1"), ethernet("eno2")},
			Bonds:     []infrav1.NetworkDataLinkBond{{ID: "bond0", BondLinks: []infrav1.LinkID{"eno2"}}},
		}),
		field: "spec.networkData.links.bonds[0].bondMode", message: "bondMode is required with bondLinks",
	},
	{
		name: "bondFrom without a network",
		given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1")},
			Bonds:     []infrav1.NetworkDataLinkBond{{ID: "bond0", BondFrom: &infrav1.BondSource{ClusterNetwork: "prod"}}},
		}),
		field: "spec.networkData.links.bonds[0].bondFrom.network", message: "should be at least 1 chars long",
	},
	{
		name: "bond member that is not a link",
		given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1")},
			Bonds:     []infrav1.NetworkDataLinkBond{{ID: "bond0", BondMode: "active-backup", BondLinks: []infrav1.LinkID{"eno1", "eno9"}}},
		}),
		field: "spec.networkData.links.bonds", message: "every bondLinks entry must name an ethernet in networkData.links (bonds aggregate Ethernet interfaces); add the ethernet or fix the id",
	},
	{
		name: "bond member that is a VLAN",
		given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1")},
			Bonds:     []infrav1.NetworkDataLinkBond{{ID: "bond0", BondMode: "active-backup", BondLinks: []infrav1.LinkID{"vlan10"}}},
			Vlans:     []infrav1.NetworkDataLinkVlan{{ID: "vlan10", VlanID: ptr.To[int32](10), VlanLink: "eno1"}},
		}),
		field: "spec.networkData.links.bonds", message: "every bondLinks entry must name an ethernet in networkData.links",
	},
	{
		name: "VLAN id 4095",
		given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1")},
			Vlans:     []infrav1.NetworkDataLinkVlan{{ID: "vlan", VlanID: ptr.To[int32](4095), VlanLink: "eno1"}},
		}),
		field: "spec.networkData.links.vlans[0].vlanID", message: "should be less than or equal to 4094",
	},
	{
		name: "VLAN id below 0",
		given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1")},
			Vlans:     []infrav1.NetworkDataLinkVlan{{ID: "vlan", VlanID: ptr.To[int32](-1), VlanLink: "eno1"}},
		}),
		field: "spec.networkData.links.vlans[0].vlanID", message: "should be greater than or equal to 0",
	},
	{
		name: "VLAN with both vlanID and vlanIDFrom",
		given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1")},
			Vlans: []infrav1.NetworkDataLinkVlan{{
				ID: "vlan", VlanID: ptr.To[int32](10), VlanLink: "eno1",
				VlanIDFrom: &infrav1.VLANIDSource{ClusterNetwork: "prod", Network: "storage"},
			}},
		}),
		field: "spec.networkData.links.vlans[0]", message: "give exactly one of vlanID (a fixed VLAN tag) and vlanIDFrom",
	},
	{
		name: "VLAN with neither vlanID nor vlanIDFrom",
		given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1")},
			Vlans:     []infrav1.NetworkDataLinkVlan{{ID: "vlan", VlanLink: "eno1"}},
		}),
		field: "spec.networkData.links.vlans[0]", message: "give exactly one of vlanID (a fixed VLAN tag) and vlanIDFrom",
	},
	{
		name: "vlanIDFrom without a network",
		given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1")},
			Vlans: []infrav1.NetworkDataLinkVlan{{
				ID: "vlan", VlanLink: "eno1", VlanIDFrom: &infrav1.VLANIDSource{ClusterNetwork: "prod"},
			}},
		}),
		field: "spec.networkData.links.vlans[0].vlanIDFrom.network", message: "should be at least 1 chars long",
	},
	{
		name: "VLAN on a link that does not exist",
		given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1")},
			Vlans:     []infrav1.NetworkDataLinkVlan{{ID: "vlan10", VlanID: ptr.To[int32](10), VlanLink: "bond1"}},
		}),
		field: "spec.networkData.links.vlans", message: "every vlanLink must name another link in networkData.links (the id of an ethernet, bond, bridge or vlan); add the link or fix the id",
	},
	{
		name: "VLAN on itself",
		given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1")},
			Vlans:     []infrav1.NetworkDataLinkVlan{{ID: "vlan10", VlanID: ptr.To[int32](10), VlanLink: "vlan10"}},
		}),
		field: "spec.networkData.links.vlans", message: "every vlanLink must name another link in networkData.links",
	},
	{
		name: "bridge member that is not a link",
		given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1")},
			Bridges:   []infrav1.NetworkDataLinkBridge{{ID: "br0", BridgeLinks: []infrav1.LinkID{"eno2"}}},
		}),
		field: "spec.networkData.links.bridges", message: "every bridgeLinks entry must name an ethernet, bond or vlan in networkData.links; add the link or fix the id",
	},
	{
		name: "one id for an ethernet and a bond",
		given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1"), ethernet("eno2")},
			Bonds:     []infrav1.NetworkDataLinkBond{{ID: "eno1", BondMode: "active-backup", BondLinks: []infrav1.LinkID{"eno2"}}},
		}),
		field: "spec.networkData.links", message: "link ids must be unique across ethernets, bonds, bridges and vlans; rename one of the links that share an id",
	},
	{
		name: "one id for a bridge and a VLAN",
		given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1")},
			Bridges:   []infrav1.NetworkDataLinkBridge{{ID: "lan", BridgeLinks: []infrav1.LinkID{"eno1"}}},
			Vlans:     []infrav1.NetworkDataLinkVlan{{ID: "lan", VlanID: ptr.To[int32](10), VlanLink: "eno1"}},
		}),
		field: "spec.networkData.links", message: "link ids must be unique across ethernets, bonds, bridges and vlans",
	},
	{
		name: "one id for two ethernets",
		given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1"), ethernet("eno1")},
		}),
		field: "spec.networkData.links.ethernets[1]", message: `Duplicate value: {"id":"eno1"}`,
	},
}

var networkRefusals = []templateCase{
	{
		name:  "IPv4 network with no address source",
		given: func(m *infrav1.Metal3DataTemplate) { m.Spec.NetworkData.Networks.IPv4[0].IPAddressFromIPPool = "" },
		field: ipv4, message: addrMsg,
	},
	{
		name: "IPv4 network with two address sources",
		given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.NetworkData.Networks.IPv4[0].FromPoolRef = &infrav1.IPPoolReference{Name: "pool", Kind: "InClusterIPPool", APIGroup: "ipam.cluster.x-k8s.io"}
		},
		field: ipv4, message: addrMsg,
	},
	{
		name:  "IPv6 network with no address source",
		given: func(m *infrav1.Metal3DataTemplate) { m.Spec.NetworkData.Networks.IPv6[0].IPAddressFromIPPool = "" },
		field: ipv6, message: addrMsg,
	},
	{
		name: "IPv6 network with two address sources",
		given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.NetworkData.Networks.IPv6[0].IPAddress = &infrav1.NetworkDataIPAddress{Subnet: ptrTo(infrav1.IPSubnet("2001:db8::/64"))}
		},
		field: ipv6, message: addrMsg,
	},
	{
		name: "seed-era ipAddress without start or subnet",
		given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.NetworkData.Networks.IPv4[0].IPAddressFromIPPool = ""
			m.Spec.NetworkData.Networks.IPv4[0].IPAddress = &infrav1.NetworkDataIPAddress{End: ptrTo(infrav1.IPAddress("10.0.0.99"))}
		},
		field: ipv4 + ".ipAddress", message: "needs start or subnet: give the first address to hand out, or the subnet to take it from",
	},
	{
		name:  "IPv4 netmask above 32",
		given: func(m *infrav1.Metal3DataTemplate) { m.Spec.NetworkData.Networks.IPv4[0].Netmask = ptrTo(int32(33)) },
		field: ipv4 + ".netmask", message: "should be less than or equal to 32",
	},
	{
		name: "fromPoolRef with an empty kind",
		given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.NetworkData.Networks.IPv4[0].IPAddressFromIPPool = ""
			m.Spec.NetworkData.Networks.IPv4[0].FromPoolRef = &infrav1.IPPoolReference{Name: "pool", APIGroup: "ipam.cluster.x-k8s.io"}
			m.Spec.NetworkData.Networks.IPv4[0].FromPoolRef.Kind = " "
		},
		field: ipv4 + ".fromPoolRef.kind", message: "should match",
	},
	{
		name: "fromPoolRef apiGroup that is not a DNS name",
		given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.NetworkData.Networks.IPv4[0].IPAddressFromIPPool = ""
			m.Spec.NetworkData.Networks.IPv4[0].FromPoolRef = &infrav1.IPPoolReference{Name: "pool", Kind: "IPPool", APIGroup: "ipam.metal3.io/v1alpha1"}
		},
		field: ipv4 + ".fromPoolRef.apiGroup", message: "should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'",
	},
	{
		name: "route gateway fromPoolRef kind with a space",
		given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.NetworkData.Networks.IPv4[0].Routes[0].Gateway = infrav1.NetworkGatewayv4{
				FromPoolRef: &infrav1.IPPoolReference{Name: "pool", Kind: "IP Pool", APIGroup: "ipam.metal3.io"},
			}
		},
		field: route4 + ".gateway.fromPoolRef.kind", message: "should match '^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$'",
	},
	{
		name: "fromPoolAnnotation of an unknown object",
		given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.NetworkData.Networks.IPv4[0].FromPoolAnnotation = &infrav1.FromPoolAnnotation{Object: "cluster", Annotation: "pool"}
		},
		field: ipv4 + ".fromPoolAnnotation.object", message: `Unsupported value: "cluster"`,
	},
	{
		name:  "static network on a link that does not exist",
		given: func(m *infrav1.Metal3DataTemplate) { m.Spec.NetworkData.Networks.IPv4[0].Link = "eno2" },
		field: "spec.networkData.networks", message: "every network's link must name a link in networkData.links (the id of an ethernet, bond, bridge or vlan); add the link or fix the id",
	},
	{
		name: "DHCP network on a link that does not exist",
		given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.NetworkData.Networks.IPv6SLAAC = []infrav1.NetworkDataIPv6DHCP{{ID: "slaac", Link: "eno2"}}
		},
		field: "spec.networkData.networks", message: "every network's link must name a link in networkData.links",
	},
	{
		name:  "IPv4 route to an IPv6 network",
		given: func(m *infrav1.Metal3DataTemplate) { m.Spec.NetworkData.Networks.IPv4[0].Routes[0].Network = "::" },
		field: route4 + ".network", message: "must be an IPv4 address, such as 192.168.0.10",
	},
	{
		name:  "IPv6 route to an IPv4 network",
		given: func(m *infrav1.Metal3DataTemplate) { m.Spec.NetworkData.Networks.IPv6[0].Routes[0].Network = "0.0.0.0" },
		field: route6 + ".network", message: "must be an IPv6 address, such as 2001:db8::10",
	},
	{
		name: "IPv4 route prefix above 32",
		given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.NetworkData.Networks.IPv4[0].Routes[0].Prefix = ptr.To[int32](33)
		},
		field: route4 + ".prefix", message: "should be less than or equal to 32",
	},
	{
		name: "IPv4 gateway with no source",
		given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.NetworkData.Networks.IPv4[0].Routes[0].Gateway = infrav1.NetworkGatewayv4{}
		},
		field: route4 + ".gateway", message: gwMsg,
	},
	{
		name: "IPv4 gateway with two sources",
		given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.NetworkData.Networks.IPv4[0].Routes[0].Gateway.String = ptrTo(infrav1.IPv4Address("192.168.0.1"))
		},
		field: route4 + ".gateway", message: gwMsg,
	},
	{
		name: "IPv6 gateway with no source",
		given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.NetworkData.Networks.IPv6[0].Routes[0].Gateway = infrav1.NetworkGatewayv6{}
		},
		field: route6 + ".gateway", message: gwMsg,
	},
	{
		name: "IPv4 gateway written as IPv6",
		given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.NetworkData.Networks.IPv4[0].Routes[0].Gateway = infrav1.NetworkGatewayv4{String: ptrTo(infrav1.IPv4Address("2001:db8::1"))}
		},
		field: route4 + ".gateway.string", message: "must be an IPv4 address, such as 192.168.0.10",
	},
	{
		name: "IPv6 route DNS server written as IPv4",
		given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.NetworkData.Networks.IPv6[0].Routes[0].Services = &infrav1.NetworkDataServicev6{DNS: []infrav1.IPv6Address{"192.168.0.53"}}
		},
		field: route6 + ".services.dns[0]", message: "must be an IPv6 address, such as 2001:db8::10",
	},
	{
		name: "host DNS server that is not an address",
		given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.NetworkData.Services.DNS = []infrav1.IPAddress{"dns.example.com"}
		},
		field: "spec.networkData.services.dns[0]", message: "must be an IPv4 or IPv6 address, such as 192.168.0.10 or 2001:db8::10",
	},
}

// TestDataTemplateRefusesInvalidFields breaks one rule at a time and expects the message and
// field path the docs (docs/api/metal3datatemplate.md) promise.
func TestDataTemplateRefusesInvalidFields(t *testing.T) {
	ns := newNamespace(t)
	var cases []templateCase
	cases = append(cases, metaDataRefusals...)
	cases = append(cases, linkRefusals...)
	cases = append(cases, networkRefusals...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			tpl := validTemplate(ns)
			tc.given(tpl)
			expectRefused(g, env.Client.Create(context.Background(), tpl), tc.field, tc.message)
		})
	}
}

// TestDataTemplateAcceptsValidVariants shows that each rule refuses only what it should: the
// boundary values and the alternative sources next to the refused ones are accepted.
func TestDataTemplateAcceptsValidVariants(t *testing.T) {
	ns := newNamespace(t)
	cases := []struct {
		name  string
		given func(*infrav1.Metal3DataTemplate)
	}{
		{name: "the base template", given: func(*infrav1.Metal3DataTemplate) {}},
		{name: "VLAN id taken from a ClusterNetwork network", given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1")},
			Vlans: []infrav1.NetworkDataLinkVlan{{
				ID: "storage", VlanLink: "eno1", VlanIDFrom: &infrav1.VLANIDSource{ClusterNetwork: "prod", Network: "storage"},
			}},
		})},
		{name: "MTU 1280 and 9000", given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{
				func() infrav1.NetworkDataLinkEthernet { e := ethernet("eno1"); e.MTU = 1280; return e }(),
				func() infrav1.NetworkDataLinkEthernet { e := ethernet("eno2"); e.MTU = 9000; return e }(),
			},
		})},
		{name: "VLAN ids 0 and 4094", given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1")},
			Vlans: []infrav1.NetworkDataLinkVlan{
				{ID: "vlan0", VlanID: ptr.To[int32](0), VlanLink: "eno1"},
				{ID: "vlan4094", VlanID: ptr.To[int32](4094), VlanLink: "eno1"},
			},
		})},
		{name: "MAC from a string, the boot MAC and an annotation", given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{
				{Type: "phy", ID: "eno1", MACAddress: &infrav1.NetworkLinkEthernetMac{String: ptrTo(infrav1.MACAddress("0a:1B:2c:3D:4e:5F"))}},
				{Type: "phy", ID: "eno2", MACAddress: &infrav1.NetworkLinkEthernetMac{FromBootMAC: ptr.To(true)}},
				{Type: "phy", ID: "eno3", MACAddress: &infrav1.NetworkLinkEthernetMac{
					FromAnnotation: &infrav1.NetworkLinkEthernetMacFromAnnotation{Object: infrav1.ObjectBareMetalHost, Annotation: "example.com/mac"},
				}},
			},
		})},
		{name: "bond without parameters or MAC, VLAN on the bond, bridge over the VLAN", given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1"), ethernet("eno2"), ethernet("eno3")},
			Bonds:     []infrav1.NetworkDataLinkBond{{ID: "bond0", BondMode: "802.3ad", BondLinks: []infrav1.LinkID{"eno2", "eno3"}}},
			Vlans:     []infrav1.NetworkDataLinkVlan{{ID: "bond0.100", VlanID: ptr.To[int32](100), VlanLink: "bond0"}},
			Bridges:   []infrav1.NetworkDataLinkBridge{{ID: "br100", BridgeLinks: []infrav1.LinkID{"bond0.100"}}},
		})},
		{name: "a bond whose members the fabric gives (bondFrom), VLAN on it", given: withLinks(infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1")},
			Bonds:     []infrav1.NetworkDataLinkBond{{ID: "bond0", BondFrom: &infrav1.BondSource{ClusterNetwork: "prod", Network: "control"}}},
			Vlans:     []infrav1.NetworkDataLinkVlan{{ID: "bond0.100", VlanID: ptr.To[int32](100), VlanLink: "bond0"}},
		})},
		{name: "fromPoolAnnotation next to the pool it overrides", given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.NetworkData.Networks.IPv4[0].FromPoolAnnotation = &infrav1.FromPoolAnnotation{Object: infrav1.ObjectMachine, Annotation: "example.com/pool"}
			m.Spec.NetworkData.Networks.IPv4[0].Routes[0].Gateway.FromPoolAnnotation = &infrav1.FromPoolAnnotation{Object: infrav1.ObjectMachine, Annotation: "example.com/pool"}
		}},
		{name: "seed-era address computed from the index", given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.NetworkData.Networks.IPv4[0].IPAddressFromIPPool = ""
			m.Spec.NetworkData.Networks.IPv4[0].IPAddress = &infrav1.NetworkDataIPAddress{
				Start: ptrTo(infrav1.IPAddress("10.0.0.10")), End: ptrTo(infrav1.IPAddress("10.0.0.99")), Step: 2,
			}
			m.Spec.NetworkData.Networks.IPv4[0].Netmask = ptrTo(int32(24))
		}},
		{name: "DHCP and SLAAC networks on existing links", given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.NetworkData.Networks.IPv4DHCP = []infrav1.NetworkDataIPv4DHCP{{ID: "dhcp4", Link: "eno1"}}
			m.Spec.NetworkData.Networks.IPv6DHCP = []infrav1.NetworkDataIPv6DHCP{{ID: "dhcp6", Link: "eno1"}}
			m.Spec.NetworkData.Networks.IPv6SLAAC = []infrav1.NetworkDataIPv6DHCP{{ID: "slaac", Link: "eno1"}}
		}},
		{name: "metaData MAC from the boot MAC", given: func(m *infrav1.Metal3DataTemplate) {
			m.Spec.MetaData.FromHostInterfaces[0] = infrav1.MetaDataHostInterface{Key: "mac", FromBootMAC: ptr.To(true)}
		}},
		{name: "networkData only", given: func(m *infrav1.Metal3DataTemplate) { m.Spec.MetaData = nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			tpl := validTemplate(ns)
			tc.given(tpl)
			g.Expect(env.Client.Create(context.Background(), tpl)).To(Succeed())
		})
	}
}
