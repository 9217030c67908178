package render

import (
	"slices"

	"k8s.io/utils/ptr"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// Facts is everything a template is rendered from, gathered by the caller.
type Facts struct {
	// Index is the Metal3Data index of the host's claim.
	Index int

	// Namespace is the namespace of the rendered objects (metaData `namespaces`).
	Namespace string

	// Machine and Metal3Machine are nil before provisioning (pre-provisioning network data,
	// `metalwire render` without --machine): a template that reads them then fails with an
	// error naming the field.
	Machine       *Object
	Metal3Machine *Object

	// Host is the BareMetalHost.
	Host Object

	// NICs are the host's inspected interfaces (status.hardware.nics); empty before inspection.
	NICs []NIC

	// BootMAC is the host's spec.bootMACAddress.
	BootMAC string

	// Pools holds the address allocated to this host from each pool the template names. A pool
	// the template needs that is missing here gives a WaitingForPool error.
	Pools map[PoolRef]PoolAddress

	// VLANs holds the VLAN id each ClusterNetwork network was assigned, for VLAN links with
	// vlanIDFrom. A link whose network is missing here fails with ReasonVLANUnresolved.
	VLANs map[VLANRef]int32

	// Bonds holds, for bonds with bondFrom, how the fabric bonded the host's cards for each
	// ClusterNetwork network. A bond whose network is missing here fails with
	// ReasonBondUnresolved.
	Bonds map[VLANRef]FabricBond
}

// FabricBond is how the fabric bonded a host's cards for one ClusterNetwork network.
type FabricBond struct {
	// Mode is the network_data.json bond_mode: 802.3ad (lag.mode lacp) or active-backup
	// (static).
	Mode string
	// LACPRate is slow or fast for 802.3ad, empty otherwise.
	LACPRate string
	// MACs are the bonded cards' MAC addresses, in the order of the host's NIC object.
	MACs []string
}

// BondRefs lists the ClusterNetwork networks the template's bonds take their members from
// (bondFrom), each once, in template order: what the caller must resolve into Facts.Bonds.
func BondRefs(nd *infrav1.NetworkData) []VLANRef {
	if nd == nil {
		return nil
	}
	var refs []VLANRef
	for _, b := range ptr.Deref(nd.Links, infrav1.NetworkDataLinks{}).Bonds {
		if b.BondFrom == nil {
			continue
		}
		ref := VLANRef{ClusterNetwork: b.BondFrom.ClusterNetwork, Network: b.BondFrom.Network}
		if !slices.Contains(refs, ref) {
			refs = append(refs, ref)
		}
	}
	return refs
}

// VLANRef names a network of a ClusterNetwork, whose VLAN id a VLAN link takes (vlanIDFrom).
type VLANRef struct {
	ClusterNetwork string
	Network        string
}

func (r VLANRef) String() string { return r.ClusterNetwork + "/" + r.Network }

// VLANRefs lists the ClusterNetwork networks the template's VLAN links take their ids from,
// each once, in the order the template names them: what the caller must resolve into
// Facts.VLANs.
func VLANRefs(nd *infrav1.NetworkData) []VLANRef {
	if nd == nil {
		return nil
	}
	var refs []VLANRef
	seen := map[VLANRef]bool{}
	for _, v := range ptr.Deref(nd.Links, infrav1.NetworkDataLinks{}).Vlans {
		if v.VlanIDFrom == nil {
			continue
		}
		ref := VLANRef{ClusterNetwork: v.VlanIDFrom.ClusterNetwork, Network: v.VlanIDFrom.Network}
		if !seen[ref] {
			seen[ref] = true
			refs = append(refs, ref)
		}
	}
	return refs
}

// Object is what a template may read from the Machine, Metal3Machine or BareMetalHost.
type Object struct {
	Name        string
	Namespace   string
	Labels      map[string]string
	Annotations map[string]string
}

// NIC is one of the host's network interfaces.
type NIC struct {
	Name string
	MAC  string
}

// PoolRef identifies a pool: the API group and kind of any IPAM provider, and the pool's name in
// the template's namespace. Use NewPoolRef so that the ipam.metal3.io defaults are filled in.
type PoolRef struct {
	APIGroup string
	Kind     string
	Name     string
}

// Pool defaults: an item that names only a pool means an ipam.metal3.io IPPool.
const (
	DefaultPoolAPIGroup = "ipam.metal3.io"
	DefaultPoolKind     = "IPPool"
)

// IsMetal3IPPool says whether the pool is an ipam.metal3.io IPPool, claimed with an IPClaim;
// any other kind is claimed through the Cluster API IPAM contract with an IPAddressClaim.
func (p PoolRef) IsMetal3IPPool() bool {
	return p.APIGroup == DefaultPoolAPIGroup && p.Kind == DefaultPoolKind
}

// NewPoolRef returns the identity of a pool, defaulting apiGroup and kind to ipam.metal3.io IPPool.
func NewPoolRef(apiGroup, kind, name string) PoolRef {
	if apiGroup == "" {
		apiGroup = DefaultPoolAPIGroup
	}
	if kind == "" {
		kind = DefaultPoolKind
	}
	return PoolRef{APIGroup: apiGroup, Kind: kind, Name: name}
}

// String names the pool for messages: just the name for an ipam.metal3.io IPPool.
func (p PoolRef) String() string {
	if p.APIGroup == DefaultPoolAPIGroup && p.Kind == DefaultPoolKind {
		return p.Name
	}
	return p.Kind + "." + p.APIGroup + "/" + p.Name
}

// PoolAddress is the address a pool gave this host, as an IPAddress object holds it.
type PoolAddress struct {
	Address    string   `json:"address"`
	Prefix     int      `json:"prefix"`
	Gateway    string   `json:"gateway,omitempty"`
	DNSServers []string `json:"dnsServers,omitempty"`
}

// HostFacts fills Host, NICs and BootMAC from a BareMetalHost.
func (f *Facts) HostFacts(bmh *bmov1.BareMetalHost) {
	f.Host = Object{
		Name:        bmh.Name,
		Namespace:   bmh.Namespace,
		Labels:      bmh.Labels,
		Annotations: bmh.Annotations,
	}
	f.BootMAC = bmh.Spec.BootMACAddress
	f.NICs = nil
	if bmh.Status.HardwareDetails != nil {
		for _, nic := range bmh.Status.HardwareDetails.NIC {
			f.NICs = append(f.NICs, NIC{Name: nic.Name, MAC: nic.MAC})
		}
	}
}

// object returns the named object, or nil when the caller did not provide it.
func (f *Facts) object(kind string) *Object {
	switch kind {
	case infrav1.ObjectMachine:
		return f.Machine
	case infrav1.ObjectMetal3Machine:
		return f.Metal3Machine
	case infrav1.ObjectBareMetalHost:
		return &f.Host
	}
	return nil
}
