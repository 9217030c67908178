package v1beta1

import (
	"bytes"
	"encoding/json"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// A Metal3DataTemplate written as v1beta1 reads back as v1beta1 exactly as written, also where
// v1beta2 cannot tell two spellings apart: a pool reference's `apiGroup: ""` and `kind: ""`
// (metal3-dev-env writes them: upstream's v1beta1 schema requires both) become v1beta2's
// defaults ipam.metal3.io and IPPool, a bond's `bondXmitHashPolicy: ""` and an unset one are the
// same v1beta2 value. When converting the v1beta1 metaData or networkData to v1beta2 and back
// would not give the written text, the written part travels in the v1beta2 object's
// SpokeDataAnnotation; a v1beta1 reader is shown it for as long as v1beta2 still holds what it
// converts to (compared with the API server's defaults applied to both sides). Once a v1beta2
// client changes the part, v1beta1 readers see the plain conversion of the new value.

// sameJSON says whether two values serialise to the same JSON: stricter than same, it tells
// unset from empty and 0 from absent.
func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// writtenMetaData is the v1beta1 metaData to keep in the annotation: in when converting it to
// v1beta2 and back changes its text, else nil.
func writtenMetaData(in *MetaData) *MetaData {
	hub := metaDataToHub(in)
	defaultMetaData(hub)
	if sameJSON(metaDataFromHub(hub), in) {
		return nil
	}
	return in
}

// writtenNetworkData is writtenMetaData for networkData.
func writtenNetworkData(in *NetworkData) *NetworkData {
	hub := networkDataToHub(in)
	defaultNetworkData(hub)
	if sameJSON(networkDataFromHub(hub), in) {
		return nil
	}
	return in
}

// keptMetaData is the metaData a v1beta1 reader sees: the written one kept in the annotation
// while v1beta2 still holds its conversion, else the conversion of v1beta2's.
func keptMetaData(hub *infrav1.MetaData, kept *MetaData) *MetaData {
	if kept != nil {
		want, have := metaDataToHub(kept), hub.DeepCopy()
		defaultMetaData(want)
		defaultMetaData(have)
		if sameJSON(want, have) {
			return kept
		}
	}
	return metaDataFromHub(hub)
}

// keptNetworkData is keptMetaData for networkData.
func keptNetworkData(hub *infrav1.NetworkData, kept *NetworkData) *NetworkData {
	if kept != nil {
		want, have := networkDataToHub(kept), hub.DeepCopy()
		defaultNetworkData(want)
		defaultNetworkData(have)
		if sameJSON(want, have) {
			return kept
		}
	}
	return networkDataFromHub(hub)
}

// defaultMetaData applies the defaults of the v1beta2 CRD's metaData schema, as the API server
// does to every object it reads.
func defaultMetaData(md *infrav1.MetaData) {
	if md == nil {
		return
	}
	for _, list := range [][]infrav1.FromPool{md.IPAddressesFromPool, md.PrefixesFromPool, md.GatewaysFromPool, md.DNSServersFromPool} {
		for i := range list {
			orDefault(&list[i].APIGroup, "ipam.metal3.io")
			orDefault(&list[i].Kind, "IPPool")
		}
	}
	for i := range md.Indexes {
		orDefault(&md.Indexes[i].Step, 1)
	}
	for i := range md.IPAddresses {
		orDefault(&md.IPAddresses[i].Step, 1)
	}
}

// defaultNetworkData applies the defaults of the v1beta2 CRD's networkData schema.
func defaultNetworkData(nd *infrav1.NetworkData) {
	if nd == nil {
		return
	}
	if l := nd.Links; l != nil {
		for i := range l.Ethernets {
			orDefault(&l.Ethernets[i].MTU, 1500)
		}
		for i := range l.Bonds {
			orDefault(&l.Bonds[i].MTU, 1500)
		}
		for i := range l.Bridges {
			orDefault(&l.Bridges[i].MTU, 1500)
		}
		for i := range l.Vlans {
			orDefault(&l.Vlans[i].MTU, 1500)
		}
	}
	n := nd.Networks
	if n == nil {
		return
	}
	for i := range n.IPv4 {
		defaultStatic(n.IPv4[i].FromPoolRef, n.IPv4[i].IPAddress)
		for j := range n.IPv4[i].Routes {
			defaultPoolRef(n.IPv4[i].Routes[j].Gateway.FromPoolRef)
		}
	}
	for i := range n.IPv6 {
		defaultStatic(n.IPv6[i].FromPoolRef, n.IPv6[i].IPAddress)
		for j := range n.IPv6[i].Routes {
			defaultPoolRef(n.IPv6[i].Routes[j].Gateway.FromPoolRef)
		}
	}
	for i := range n.IPv4DHCP {
		for j := range n.IPv4DHCP[i].Routes {
			defaultPoolRef(n.IPv4DHCP[i].Routes[j].Gateway.FromPoolRef)
		}
	}
	for _, list := range [][]infrav1.NetworkDataIPv6DHCP{n.IPv6DHCP, n.IPv6SLAAC} {
		for i := range list {
			for j := range list[i].Routes {
				defaultPoolRef(list[i].Routes[j].Gateway.FromPoolRef)
			}
		}
	}
}

func defaultStatic(ref *infrav1.IPPoolReference, addr *infrav1.NetworkDataIPAddress) {
	defaultPoolRef(ref)
	if addr != nil {
		orDefault(&addr.Step, 1)
	}
}

func defaultPoolRef(ref *infrav1.IPPoolReference) {
	if ref != nil {
		orDefault(&ref.APIGroup, "ipam.metal3.io")
		orDefault(&ref.Kind, "IPPool")
	}
}

func orDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}
