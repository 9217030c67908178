package v1beta2

// Routes, their gateways and the DNS services of a Metal3DataTemplate's networkData.

// NetworkGatewayv4 says where an IPv4 route's gateway comes from. An empty string or
// fromIPPool counts as unset, as an empty ipAddressFromIPPool does.
// +kubebuilder:validation:XValidation:rule="has(self.fromPoolAnnotation) || (has(self.string) && size(self.string) > 0 ? 1 : 0) + (has(self.fromIPPool) && size(self.fromIPPool) > 0 ? 1 : 0) + (has(self.fromPoolRef) ? 1 : 0) == 1",message="set exactly one gateway source: string, fromIPPool, fromPoolRef or fromPoolAnnotation"
type NetworkGatewayv4 struct {
	// string is the gateway address itself.
	// +optional
	String *IPv4Address `json:"string,omitempty"`
	// fromIPPool names an ipam.metal3.io IPPool whose gateway to use.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	FromIPPool *string `json:"fromIPPool,omitempty"`
	// fromPoolRef names a pool of any IPAM provider whose gateway to use.
	// +optional
	FromPoolRef *IPPoolReference `json:"fromPoolRef,omitempty"`
	// fromPoolAnnotation reads the pool name from an annotation.
	// +optional
	FromPoolAnnotation *FromPoolAnnotation `json:"fromPoolAnnotation,omitempty"`
}

// NetworkGatewayv6 says where an IPv6 route's gateway comes from; empty strings count as
// unset, as in NetworkGatewayv4.
// +kubebuilder:validation:XValidation:rule="has(self.fromPoolAnnotation) || (has(self.string) && size(self.string) > 0 ? 1 : 0) + (has(self.fromIPPool) && size(self.fromIPPool) > 0 ? 1 : 0) + (has(self.fromPoolRef) ? 1 : 0) == 1",message="set exactly one gateway source: string, fromIPPool, fromPoolRef or fromPoolAnnotation"
type NetworkGatewayv6 struct {
	// string is the gateway address itself.
	// +optional
	String *IPv6Address `json:"string,omitempty"`
	// fromIPPool names an ipam.metal3.io IPPool whose gateway to use.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	FromIPPool *string `json:"fromIPPool,omitempty"`
	// fromPoolRef names a pool of any IPAM provider whose gateway to use.
	// +optional
	FromPoolRef *IPPoolReference `json:"fromPoolRef,omitempty"`
	// fromPoolAnnotation reads the pool name from an annotation.
	// +optional
	FromPoolAnnotation *FromPoolAnnotation `json:"fromPoolAnnotation,omitempty"`
}

// NetworkDataRoutev4 is an IPv4 route.
type NetworkDataRoutev4 struct {
	// network is the destination network address; 0.0.0.0 with prefix 0 is the default route.
	Network IPv4Address `json:"network"`
	// prefix is the destination's prefix length.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=32
	// +optional
	Prefix *int32 `json:"prefix,omitempty"`
	// gateway of the route.
	Gateway NetworkGatewayv4 `json:"gateway"`
	// services reachable through the route.
	// +optional
	Services *NetworkDataServicev4 `json:"services,omitempty"`
}

// NetworkDataRoutev6 is an IPv6 route.
type NetworkDataRoutev6 struct {
	// network is the destination network address; :: with prefix 0 is the default route.
	Network IPv6Address `json:"network"`
	// prefix is the destination's prefix length.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=128
	// +optional
	Prefix *int32 `json:"prefix,omitempty"`
	// gateway of the route.
	Gateway NetworkGatewayv6 `json:"gateway"`
	// services reachable through the route.
	// +optional
	Services *NetworkDataServicev6 `json:"services,omitempty"`
}

// NetworkDataService lists host-wide DNS servers.
type NetworkDataService struct {
	// dns are DNS server addresses.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	DNS []IPAddress `json:"dns,omitzero"`
	// dnsFromIPPool names an ipam.metal3.io IPPool whose DNS servers to add.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	DNSFromIPPool *string `json:"dnsFromIPPool,omitempty"`
}

// NetworkDataServicev4 lists DNS servers reachable through an IPv4 route.
type NetworkDataServicev4 struct {
	// dns are IPv4 DNS server addresses.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	DNS []IPv4Address `json:"dns,omitzero"`
	// dnsFromIPPool names an ipam.metal3.io IPPool whose DNS servers to add.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	DNSFromIPPool *string `json:"dnsFromIPPool,omitempty"`
}

// NetworkDataServicev6 lists DNS servers reachable through an IPv6 route.
type NetworkDataServicev6 struct {
	// dns are IPv6 DNS server addresses.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	DNS []IPv6Address `json:"dns,omitzero"`
	// dnsFromIPPool names an ipam.metal3.io IPPool whose DNS servers to add.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	DNSFromIPPool *string `json:"dnsFromIPPool,omitempty"`
}
