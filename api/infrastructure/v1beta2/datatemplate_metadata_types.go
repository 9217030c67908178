package v1beta2

// The metaData part of a Metal3DataTemplate. Each list renders keys of the flat metaData map
// that cloud-init receives; the JSON names are CAPM3's, so existing templates apply unchanged.

// Object kinds a metaData item or a MAC address can be read from.
const (
	ObjectMachine       = "machine"
	ObjectMetal3Machine = "metal3machine"
	ObjectBareMetalHost = "baremetalhost"
)

// MetaData lists the sources of the metaData map. When two items write the same key, the later
// source in this order wins: fromHostInterfaces, ipAddressesFromPool, prefixesFromPool,
// gatewaysFromPool, dnsServersFromPool, indexes, namespaces, objectNames, fromLabels,
// fromAnnotations, strings.
type MetaData struct {
	// strings renders fixed values.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=256
	Strings []MetaDataString `json:"strings,omitzero"`

	// objectNames renders the name of the Machine, Metal3Machine or BareMetalHost.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=256
	ObjectNames []MetaDataObjectName `json:"objectNames,omitzero"`

	// indexes renders the Metal3Data index: prefix + (offset + index*step) + suffix.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=256
	Indexes []MetaDataIndex `json:"indexes,omitzero"`

	// ipAddresses renders an address computed from the index (start + index*step), without an
	// IP pool. Seed-era; IP pools (ipAddressesFromPool) are the better way.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=256
	IPAddresses []MetaDataIPAddress `json:"ipAddresses,omitzero"`

	// namespaces renders the namespace of the objects.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=256
	Namespaces []MetaDataNamespace `json:"namespaces,omitzero"`

	// ipAddressesFromPool renders the address allocated from a pool.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=256
	IPAddressesFromPool []FromPool `json:"ipAddressesFromPool,omitzero"`

	// prefixesFromPool renders the prefix length of the address allocated from a pool.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=256
	PrefixesFromPool []FromPool `json:"prefixesFromPool,omitzero"`

	// gatewaysFromPool renders the gateway of the address allocated from a pool.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=256
	GatewaysFromPool []FromPool `json:"gatewaysFromPool,omitzero"`

	// dnsServersFromPool renders the DNS servers of the address allocated from a pool,
	// comma-separated.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=256
	DNSServersFromPool []FromPool `json:"dnsServersFromPool,omitzero"`

	// fromHostInterfaces renders the MAC address of one of the host's NICs.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=256
	FromHostInterfaces []MetaDataHostInterface `json:"fromHostInterfaces,omitzero"`

	// fromLabels renders a label of an object, or "" when the label is absent.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=256
	FromLabels []MetaDataFromLabel `json:"fromLabels,omitzero"`

	// fromAnnotations renders an annotation of an object, or "" when it is absent.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=256
	FromAnnotations []MetaDataFromAnnotation `json:"fromAnnotations,omitzero"`
}

// MetaDataString renders a fixed value.
type MetaDataString struct {
	// key is the metaData key to set.
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key"`
	// value is the value to render.
	Value string `json:"value"`
}

// MetaDataObjectName renders the name of an object.
type MetaDataObjectName struct {
	// key is the metaData key to set.
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key"`
	// object is whose name to render: machine, metal3machine or baremetalhost.
	// +kubebuilder:validation:Enum=machine;metal3machine;baremetalhost
	Object string `json:"object"`
}

// MetaDataIndex renders the Metal3Data index as prefix + (offset + index*step) + suffix.
type MetaDataIndex struct {
	// key is the metaData key to set.
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key"`
	// offset is added to index*step.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Offset *int32 `json:"offset,omitempty"`
	// step multiplies the index; 1 when unset.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	Step int32 `json:"step,omitempty"`
	// prefix is written before the number.
	// +optional
	Prefix string `json:"prefix,omitempty"`
	// suffix is written after the number.
	// +optional
	Suffix string `json:"suffix,omitempty"`
}

// MetaDataIPAddress renders start + index*step, refusing an address past end or outside
// subnet. Without start, the first address is the subnet's second (192.168.0.1 for
// 192.168.0.0/24).
// +kubebuilder:validation:XValidation:rule="has(self.start) || has(self.subnet)",message="needs start or subnet: give the first address to hand out, or the subnet to take it from"
type MetaDataIPAddress struct {
	// key is the metaData key to set.
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key"`
	// start is the address rendered for index 0.
	// +optional
	Start *IPAddress `json:"start,omitempty"`
	// end is the last address that may be rendered.
	// +optional
	End *IPAddress `json:"end,omitempty"`
	// subnet bounds the rendered addresses, and gives start when start is unset.
	// +optional
	Subnet *IPSubnet `json:"subnet,omitempty"`
	// step is the distance between the addresses of consecutive indexes; 1 when unset.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	Step int32 `json:"step,omitempty"`
}

// MetaDataNamespace renders the namespace of the objects.
type MetaDataNamespace struct {
	// key is the metaData key to set.
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key"`
}

// FromPool renders a value of the address allocated to this host from a pool. The pool is an
// ipam.metal3.io IPPool by default, or any Cluster API IPAM pool named by apiGroup and kind.
type FromPool struct {
	// key is the metaData key to set.
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key"`
	// name is the pool's name, in the template's namespace.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// apiGroup is the pool's API group; ipam.metal3.io when unset.
	// +kubebuilder:default=ipam.metal3.io
	// +optional
	APIGroup string `json:"apiGroup,omitempty"`
	// kind is the pool's kind; IPPool when unset.
	// +kubebuilder:default=IPPool
	// +optional
	Kind string `json:"kind,omitempty"`
}

// MetaDataHostInterface renders the MAC address of a host NIC.
// +kubebuilder:validation:XValidation:rule="has(self.interface) != (has(self.fromBootMAC) && self.fromBootMAC)",message="set exactly one of interface (a NIC name from the host's hardware details) or fromBootMAC: true"
type MetaDataHostInterface struct {
	// key is the metaData key to set.
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key"`
	// interface names a NIC in the host's status.hardware.nics.
	// +optional
	Interface string `json:"interface,omitempty"`
	// fromBootMAC renders the host's spec.bootMACAddress.
	// +optional
	FromBootMAC *bool `json:"fromBootMAC,omitempty"`
}

// MetaDataFromLabel renders a label of an object, or "" when the label is absent.
type MetaDataFromLabel struct {
	// key is the metaData key to set.
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key"`
	// object is whose label to read: machine, metal3machine or baremetalhost.
	// +kubebuilder:validation:Enum=machine;metal3machine;baremetalhost
	Object string `json:"object"`
	// label is the label key.
	// +kubebuilder:validation:MinLength=1
	Label string `json:"label"`
}

// MetaDataFromAnnotation renders an annotation of an object, or "" when it is absent.
type MetaDataFromAnnotation struct {
	// key is the metaData key to set.
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key"`
	// object is whose annotation to read: machine, metal3machine or baremetalhost.
	// +kubebuilder:validation:Enum=machine;metal3machine;baremetalhost
	Object string `json:"object"`
	// annotation is the annotation key.
	// +kubebuilder:validation:MinLength=1
	Annotation string `json:"annotation"`
}
