package v1alpha1

// Upstream checks these strings with long regular expressions whose failure message is the
// expression itself. metalwire checks them with the Kubernetes CEL ip()/cidr() functions, which
// parse the address for real and let the message say what is expected; the API server prefixes
// each message with the field path.
//
// IPAddressStr carries no rule of its own: the rule sits on each spec field that holds one (see
// ippool_types.go, ipaddress_types.go), because IPPool.status.indexes holds one per claim and a
// per-value rule there would cap how many claims a pool can serve. Its values are written by
// the controller from addresses that were checked on their way in.
//
// 39 characters is the longest textual IPv6 address without an embedded IPv4 part or a zone,
// both of which isIP() refuses. The bounds let the API server estimate the cost of the rules.

// IPAddressStr is an IPv4 or IPv6 address, such as 192.168.0.10 or 2001:db8::10.
// +kubebuilder:validation:MaxLength=39
type IPAddressStr string

// IPAddressv4Str is an IPv4 address, such as 192.168.0.10.
// +kubebuilder:validation:MaxLength=15
// +kubebuilder:validation:XValidation:rule="isIP(self) && ip(self).family() == 4",message="must be an IPv4 address such as 192.168.0.10"
type IPAddressv4Str string

// IPAddressv6Str is an IPv6 address, such as 2001:db8::10.
// +kubebuilder:validation:MaxLength=39
// +kubebuilder:validation:XValidation:rule="isIP(self) && ip(self).family() == 6",message="must be an IPv6 address such as 2001:db8::10"
type IPAddressv6Str string

// IPSubnetStr is an IPv4 or IPv6 network in CIDR notation, such as 192.168.0.0/24 or
// 2001:db8::/64.
// +kubebuilder:validation:MaxLength=43
// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="must be a network in CIDR notation such as 192.168.0.0/24 or 2001:db8::/64"
type IPSubnetStr string

// IPSubnetv4Str is an IPv4 network in CIDR notation, such as 192.168.0.0/24.
// +kubebuilder:validation:MaxLength=18
// +kubebuilder:validation:XValidation:rule="isCIDR(self) && cidr(self).ip().family() == 4",message="must be an IPv4 network in CIDR notation such as 192.168.0.0/24"
type IPSubnetv4Str string

// IPSubnetv6Str is an IPv6 network in CIDR notation, such as 2001:db8::/64.
// +kubebuilder:validation:MaxLength=43
// +kubebuilder:validation:XValidation:rule="isCIDR(self) && cidr(self).ip().family() == 6",message="must be an IPv6 network in CIDR notation such as 2001:db8::/64"
type IPSubnetv6Str string
