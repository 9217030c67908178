package v1beta1

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// The metaData and networkData trees of a Metal3DataTemplate. v1beta2 renamed the *FromIPPool
// lists of metaData to *FromPool, made bond parameters a list, typed the pool references, and
// (metalwire) added bridges, fromBootMAC MACs and addresses without a pool; those have no v1beta1
// form and come back from the conversion-data annotation (see Metal3DataTemplate.ConvertTo).

func metaDataToHub(in *MetaData) *infrav1.MetaData {
	if in == nil {
		return nil
	}
	return &infrav1.MetaData{
		Strings:     mapSlice(in.Strings, func(s MetaDataString) infrav1.MetaDataString { return infrav1.MetaDataString(s) }),
		ObjectNames: mapSlice(in.ObjectNames, func(s MetaDataObjectName) infrav1.MetaDataObjectName { return infrav1.MetaDataObjectName(s) }),
		Indexes: mapSlice(in.Indexes, func(s MetaDataIndex) infrav1.MetaDataIndex {
			return infrav1.MetaDataIndex{Key: s.Key, Offset: intToHub(s.Offset), Step: int32(s.Step), Prefix: s.Prefix, Suffix: s.Suffix} //nolint:gosec // small numbers
		}),
		Namespaces:          mapSlice(in.Namespaces, func(s MetaDataNamespace) infrav1.MetaDataNamespace { return infrav1.MetaDataNamespace(s) }),
		IPAddressesFromPool: mapSlice(in.IPAddressesFromPool, fromPoolToHub),
		PrefixesFromPool:    mapSlice(in.PrefixesFromPool, fromPoolToHub),
		GatewaysFromPool:    mapSlice(in.GatewaysFromPool, fromPoolToHub),
		DNSServersFromPool:  mapSlice(in.DNSServersFromPool, fromPoolToHub),
		FromHostInterfaces: mapSlice(in.FromHostInterfaces, func(s MetaDataHostInterface) infrav1.MetaDataHostInterface {
			return infrav1.MetaDataHostInterface(s)
		}),
		FromLabels: mapSlice(in.FromLabels, func(s MetaDataFromLabel) infrav1.MetaDataFromLabel { return infrav1.MetaDataFromLabel(s) }),
		FromAnnotations: mapSlice(in.FromAnnotations, func(s MetaDataFromAnnotation) infrav1.MetaDataFromAnnotation {
			return infrav1.MetaDataFromAnnotation(s)
		}),
	}
}

func metaDataFromHub(in *infrav1.MetaData) *MetaData {
	if in == nil {
		return nil
	}
	return &MetaData{
		Strings:     mapSlice(in.Strings, func(s infrav1.MetaDataString) MetaDataString { return MetaDataString(s) }),
		ObjectNames: mapSlice(in.ObjectNames, func(s infrav1.MetaDataObjectName) MetaDataObjectName { return MetaDataObjectName(s) }),
		Indexes: mapSlice(in.Indexes, func(s infrav1.MetaDataIndex) MetaDataIndex {
			return MetaDataIndex{Key: s.Key, Offset: intFromHub(s.Offset), Step: int(s.Step), Prefix: s.Prefix, Suffix: s.Suffix}
		}),
		Namespaces:          mapSlice(in.Namespaces, func(s infrav1.MetaDataNamespace) MetaDataNamespace { return MetaDataNamespace(s) }),
		IPAddressesFromPool: mapSlice(in.IPAddressesFromPool, fromPoolFromHub),
		PrefixesFromPool:    mapSlice(in.PrefixesFromPool, fromPoolFromHub),
		GatewaysFromPool:    mapSlice(in.GatewaysFromPool, fromPoolFromHub),
		DNSServersFromPool:  mapSlice(in.DNSServersFromPool, fromPoolFromHub),
		FromHostInterfaces: mapSlice(in.FromHostInterfaces, func(s infrav1.MetaDataHostInterface) MetaDataHostInterface {
			return MetaDataHostInterface(s)
		}),
		FromLabels:      mapSlice(in.FromLabels, func(s infrav1.MetaDataFromLabel) MetaDataFromLabel { return MetaDataFromLabel(s) }),
		FromAnnotations: mapSlice(in.FromAnnotations, func(s infrav1.MetaDataFromAnnotation) MetaDataFromAnnotation { return MetaDataFromAnnotation(s) }),
	}
}

func fromPoolToHub(p FromPool) infrav1.FromPool   { return infrav1.FromPool(p) }
func fromPoolFromHub(p infrav1.FromPool) FromPool { return FromPool(p) }

func networkDataToHub(in *NetworkData) *infrav1.NetworkData {
	if in == nil {
		return nil
	}
	return &infrav1.NetworkData{
		Links:    linksToHub(in.Links),
		Networks: networksToHub(in.Networks),
		Services: servicesToHub(in.Services),
	}
}

func linksToHub(l *NetworkDataLink) *infrav1.NetworkDataLinks {
	if l == nil {
		return nil
	}
	return &infrav1.NetworkDataLinks{
		Ethernets: mapSlice(l.Ethernets, func(e NetworkDataLinkEthernet) infrav1.NetworkDataLinkEthernet {
			return infrav1.NetworkDataLinkEthernet{
				Type: e.Type, ID: infrav1.LinkID(e.ID), Name: infrav1.InterfaceName(e.Name), MTU: infrav1.MTU(e.MTU), //nolint:gosec // an MTU is small
				MACAddress: macToHub(e.MACAddress),
			}
		}),
		Bonds: mapSlice(l.Bonds, func(b NetworkDataLinkBond) infrav1.NetworkDataLinkBond {
			return infrav1.NetworkDataLinkBond{
				BondMode: b.BondMode, BondXmitHashPolicy: b.BondXmitHashPolicy, ID: infrav1.LinkID(b.ID),
				Name: infrav1.InterfaceName(b.Name), MTU: infrav1.MTU(b.MTU), MACAddress: macToHub(b.MACAddress), //nolint:gosec // an MTU is small
				Parameters: bondParamsToHub(b.Parameters), BondLinks: castStrings[infrav1.LinkID](b.BondLinks),
			}
		}),
		Vlans: mapSlice(l.Vlans, func(v NetworkDataLinkVlan) infrav1.NetworkDataLinkVlan {
			return infrav1.NetworkDataLinkVlan{
				VlanID: ptr.To(int32(v.VlanID)), ID: infrav1.LinkID(v.ID), Name: infrav1.InterfaceName(v.Name), //nolint:gosec // a VLAN ID is small
				MTU: infrav1.MTU(v.MTU), MACAddress: macToHub(v.MACAddress), VlanLink: infrav1.LinkID(v.VlanLink), //nolint:gosec // an MTU is small
			}
		}),
	}
}

func networksToHub(n *NetworkDataNetwork) *infrav1.NetworkDataNetworks {
	if n == nil {
		return nil
	}
	return &infrav1.NetworkDataNetworks{
		IPv4: mapSlice(n.IPv4, func(i NetworkDataIPv4) infrav1.NetworkDataIPv4 {
			return infrav1.NetworkDataIPv4{
				ID: i.ID, Link: infrav1.LinkID(i.Link), IPAddressFromIPPool: i.IPAddressFromIPPool,
				FromPoolRef: poolRefToHub(i.FromPoolRef), FromPoolAnnotation: (*infrav1.FromPoolAnnotation)(i.FromPoolAnnotation),
				Routes: mapSlice(i.Routes, routev4ToHub),
			}
		}),
		IPv6: mapSlice(n.IPv6, func(i NetworkDataIPv6) infrav1.NetworkDataIPv6 {
			return infrav1.NetworkDataIPv6{
				ID: i.ID, Link: infrav1.LinkID(i.Link), IPAddressFromIPPool: i.IPAddressFromIPPool,
				FromPoolRef: poolRefToHub(i.FromPoolRef), FromPoolAnnotation: (*infrav1.FromPoolAnnotation)(i.FromPoolAnnotation),
				Routes: mapSlice(i.Routes, routev6ToHub),
			}
		}),
		IPv4DHCP: mapSlice(n.IPv4DHCP, func(i NetworkDataIPv4DHCP) infrav1.NetworkDataIPv4DHCP {
			return infrav1.NetworkDataIPv4DHCP{ID: i.ID, Link: infrav1.LinkID(i.Link), Routes: mapSlice(i.Routes, routev4ToHub)}
		}),
		IPv6DHCP:  mapSlice(n.IPv6DHCP, ipv6DHCPToHub),
		IPv6SLAAC: mapSlice(n.IPv6SLAAC, ipv6DHCPToHub),
	}
}

func servicesToHub(s *NetworkDataService) *infrav1.NetworkDataService {
	if s == nil {
		return nil
	}
	return &infrav1.NetworkDataService{DNS: castStrings[infrav1.IPAddress](s.DNS), DNSFromIPPool: s.DNSFromIPPool}
}

func networkDataFromHub(in *infrav1.NetworkData) *NetworkData {
	if in == nil {
		return nil
	}
	return &NetworkData{
		Links:    linksFromHub(in.Links),
		Networks: networksFromHub(in.Networks),
		Services: servicesFromHub(in.Services),
	}
}

func linksFromHub(l *infrav1.NetworkDataLinks) *NetworkDataLink {
	if l == nil {
		return nil
	}
	return &NetworkDataLink{
		Ethernets: mapSlice(l.Ethernets, func(e infrav1.NetworkDataLinkEthernet) NetworkDataLinkEthernet {
			return NetworkDataLinkEthernet{
				Type: e.Type, ID: string(e.ID), Name: string(e.Name), MTU: int(e.MTU), MACAddress: macFromHub(e.MACAddress),
			}
		}),
		Bonds: mapSlice(l.Bonds, func(b infrav1.NetworkDataLinkBond) NetworkDataLinkBond {
			return NetworkDataLinkBond{
				BondMode: b.BondMode, BondXmitHashPolicy: b.BondXmitHashPolicy, ID: string(b.ID),
				Name: string(b.Name), MTU: int(b.MTU), MACAddress: macFromHub(b.MACAddress),
				Parameters: bondParamsFromHub(b.Parameters), BondLinks: castStrings[string](b.BondLinks),
			}
		}),
		Vlans: mapSlice(l.Vlans, func(v infrav1.NetworkDataLinkVlan) NetworkDataLinkVlan {
			return NetworkDataLinkVlan{
				VlanID: int(ptr.Deref(v.VlanID, 0)), ID: string(v.ID), Name: string(v.Name), MTU: int(v.MTU),
				MACAddress: macFromHub(v.MACAddress), VlanLink: string(v.VlanLink),
			}
		}),
	}
}

func networksFromHub(n *infrav1.NetworkDataNetworks) *NetworkDataNetwork {
	if n == nil {
		return nil
	}
	return &NetworkDataNetwork{
		IPv4: mapSlice(n.IPv4, func(i infrav1.NetworkDataIPv4) NetworkDataIPv4 {
			return NetworkDataIPv4{
				ID: i.ID, Link: string(i.Link), IPAddressFromIPPool: i.IPAddressFromIPPool,
				FromPoolRef: poolRefFromHub(i.FromPoolRef), FromPoolAnnotation: (*FromPoolAnnotation)(i.FromPoolAnnotation),
				Routes: mapSlice(i.Routes, routev4FromHub),
			}
		}),
		IPv6: mapSlice(n.IPv6, func(i infrav1.NetworkDataIPv6) NetworkDataIPv6 {
			return NetworkDataIPv6{
				ID: i.ID, Link: string(i.Link), IPAddressFromIPPool: i.IPAddressFromIPPool,
				FromPoolRef: poolRefFromHub(i.FromPoolRef), FromPoolAnnotation: (*FromPoolAnnotation)(i.FromPoolAnnotation),
				Routes: mapSlice(i.Routes, routev6FromHub),
			}
		}),
		IPv4DHCP: mapSlice(n.IPv4DHCP, func(i infrav1.NetworkDataIPv4DHCP) NetworkDataIPv4DHCP {
			return NetworkDataIPv4DHCP{ID: i.ID, Link: string(i.Link), Routes: mapSlice(i.Routes, routev4FromHub)}
		}),
		IPv6DHCP:  mapSlice(n.IPv6DHCP, ipv6DHCPFromHub),
		IPv6SLAAC: mapSlice(n.IPv6SLAAC, ipv6DHCPFromHub),
	}
}

func servicesFromHub(s *infrav1.NetworkDataService) *NetworkDataService {
	if s == nil {
		return nil
	}
	return &NetworkDataService{DNS: castStrings[string](s.DNS), DNSFromIPPool: s.DNSFromIPPool}
}

// intToHub and intFromHub carry an optional integer (an explicit 0 stays 0, unset stays unset).
func intToHub(in *int) *int32 {
	if in == nil {
		return nil
	}
	return ptr.To(int32(*in)) //nolint:gosec // the CRDs bound these small numbers
}

func intFromHub(in *int32) *int {
	if in == nil {
		return nil
	}
	return ptr.To(int(*in))
}

// macToHub and macFromHub: upstream's v1beta1 schema requires every link's macAddress, and
// `macAddress: {}` (no MAC source: the default MAC) is how v1beta1 says what v1beta2 says by
// leaving it out.
func macToHub(in *NetworkLinkEthernetMac) *infrav1.NetworkLinkEthernetMac {
	if in == nil || *in == (NetworkLinkEthernetMac{}) {
		return nil
	}
	return &infrav1.NetworkLinkEthernetMac{
		String:            castString[infrav1.MACAddress](in.String),
		FromHostInterface: in.FromHostInterface,
		FromAnnotation:    (*infrav1.NetworkLinkEthernetMacFromAnnotation)(in.FromAnnotation),
	}
}

func macFromHub(in *infrav1.NetworkLinkEthernetMac) *NetworkLinkEthernetMac {
	if in == nil {
		return &NetworkLinkEthernetMac{}
	}
	return &NetworkLinkEthernetMac{
		String:            castString[string](in.String),
		FromHostInterface: in.FromHostInterface,
		FromAnnotation:    (*NetworkLinkEthernetMacFromAnnotation)(in.FromAnnotation),
	}
}

// bondParamsToHub turns v1beta1's parameter map into v1beta2's list, ordered by name.
func bondParamsToHub(in NetworkDataLinkBondParams) []infrav1.NetworkDataLinkBondParam {
	if in == nil {
		return nil
	}
	out := make([]infrav1.NetworkDataLinkBondParam, 0, len(in))
	for _, name := range slices.Sorted(maps.Keys(in)) {
		out = append(out, infrav1.NetworkDataLinkBondParam{Name: name, Value: &apiextensionsv1.JSON{Raw: in[name].Raw}})
	}
	return out
}

func bondParamsFromHub(in []infrav1.NetworkDataLinkBondParam) NetworkDataLinkBondParams {
	if in == nil {
		return nil
	}
	out := make(NetworkDataLinkBondParams, len(in))
	for _, p := range in {
		var v apiextensionsv1.JSON
		if p.Value != nil {
			v.Raw = p.Value.Raw
		}
		out[p.Name] = v
	}
	return out
}

func poolRefToHub(in *corev1.TypedLocalObjectReference) *infrav1.IPPoolReference {
	if in == nil {
		return nil
	}
	return &infrav1.IPPoolReference{Name: in.Name, Kind: in.Kind, APIGroup: ptr.Deref(in.APIGroup, "")}
}

func poolRefFromHub(in *infrav1.IPPoolReference) *corev1.TypedLocalObjectReference {
	if in == nil {
		return nil
	}
	out := &corev1.TypedLocalObjectReference{Name: in.Name, Kind: in.Kind}
	if in.APIGroup != "" {
		out.APIGroup = ptr.To(in.APIGroup)
	}
	return out
}

func routev4ToHub(r NetworkDataRoutev4) infrav1.NetworkDataRoutev4 {
	return infrav1.NetworkDataRoutev4{
		Network: infrav1.IPv4Address(r.Network), Prefix: intToHub(r.Prefix),
		Gateway: infrav1.NetworkGatewayv4{
			String: castString[infrav1.IPv4Address](r.Gateway.String), FromIPPool: r.Gateway.FromIPPool,
			FromPoolRef: poolRefToHub(r.Gateway.FromPoolRef), FromPoolAnnotation: (*infrav1.FromPoolAnnotation)(r.Gateway.FromPoolAnnotation),
		},
		Services: convertPtr(r.Services, func(s NetworkDataServicev4) infrav1.NetworkDataServicev4 {
			return infrav1.NetworkDataServicev4{DNS: castStrings[infrav1.IPv4Address](s.DNS), DNSFromIPPool: s.DNSFromIPPool}
		}),
	}
}

func routev4FromHub(r infrav1.NetworkDataRoutev4) NetworkDataRoutev4 {
	return NetworkDataRoutev4{
		Network: string(r.Network), Prefix: intFromHub(r.Prefix),
		Gateway: NetworkGatewayv4{
			String: castString[string](r.Gateway.String), FromIPPool: r.Gateway.FromIPPool,
			FromPoolRef: poolRefFromHub(r.Gateway.FromPoolRef), FromPoolAnnotation: (*FromPoolAnnotation)(r.Gateway.FromPoolAnnotation),
		},
		Services: convertPtr(r.Services, func(s infrav1.NetworkDataServicev4) NetworkDataServicev4 {
			return NetworkDataServicev4{DNS: castStrings[string](s.DNS), DNSFromIPPool: s.DNSFromIPPool}
		}),
	}
}

func routev6ToHub(r NetworkDataRoutev6) infrav1.NetworkDataRoutev6 {
	return infrav1.NetworkDataRoutev6{
		Network: infrav1.IPv6Address(r.Network), Prefix: intToHub(r.Prefix),
		Gateway: infrav1.NetworkGatewayv6{
			String: castString[infrav1.IPv6Address](r.Gateway.String), FromIPPool: r.Gateway.FromIPPool,
			FromPoolRef: poolRefToHub(r.Gateway.FromPoolRef), FromPoolAnnotation: (*infrav1.FromPoolAnnotation)(r.Gateway.FromPoolAnnotation),
		},
		Services: convertPtr(r.Services, func(s NetworkDataServicev6) infrav1.NetworkDataServicev6 {
			return infrav1.NetworkDataServicev6{DNS: castStrings[infrav1.IPv6Address](s.DNS), DNSFromIPPool: s.DNSFromIPPool}
		}),
	}
}

func routev6FromHub(r infrav1.NetworkDataRoutev6) NetworkDataRoutev6 {
	return NetworkDataRoutev6{
		Network: string(r.Network), Prefix: intFromHub(r.Prefix),
		Gateway: NetworkGatewayv6{
			String: castString[string](r.Gateway.String), FromIPPool: r.Gateway.FromIPPool,
			FromPoolRef: poolRefFromHub(r.Gateway.FromPoolRef), FromPoolAnnotation: (*FromPoolAnnotation)(r.Gateway.FromPoolAnnotation),
		},
		Services: convertPtr(r.Services, func(s infrav1.NetworkDataServicev6) NetworkDataServicev6 {
			return NetworkDataServicev6{DNS: castStrings[string](s.DNS), DNSFromIPPool: s.DNSFromIPPool}
		}),
	}
}

func ipv6DHCPToHub(i NetworkDataIPv6DHCP) infrav1.NetworkDataIPv6DHCP {
	return infrav1.NetworkDataIPv6DHCP{ID: i.ID, Link: infrav1.LinkID(i.Link), Routes: mapSlice(i.Routes, routev6ToHub)}
}

func ipv6DHCPFromHub(i infrav1.NetworkDataIPv6DHCP) NetworkDataIPv6DHCP {
	return NetworkDataIPv6DHCP{ID: i.ID, Link: string(i.Link), Routes: mapSlice(i.Routes, routev6FromHub)}
}
