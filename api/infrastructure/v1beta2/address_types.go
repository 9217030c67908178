package v1beta2

// Address strings are validated at admission with the Kubernetes CEL IP and CIDR libraries, so a
// typo is refused when the manifest is applied rather than when a host is rendered. The length
// caps keep the rules' estimated cost inside the API server's budget.

// IPAddress is an IPv4 or IPv6 address, such as 192.168.0.10 or 2001:db8::10.
// +kubebuilder:validation:XValidation:rule="isIP(self)",message="must be an IPv4 or IPv6 address, such as 192.168.0.10 or 2001:db8::10"
// +kubebuilder:validation:MaxLength=45
type IPAddress string

// IPv4Address is an IPv4 address, such as 192.168.0.10.
// +kubebuilder:validation:XValidation:rule="isIP(self) && ip(self).family() == 4",message="must be an IPv4 address, such as 192.168.0.10"
// +kubebuilder:validation:MaxLength=15
type IPv4Address string

// IPv6Address is an IPv6 address, such as 2001:db8::10.
// +kubebuilder:validation:XValidation:rule="isIP(self) && ip(self).family() == 6",message="must be an IPv6 address, such as 2001:db8::10"
// +kubebuilder:validation:MaxLength=45
type IPv6Address string

// IPSubnet is a subnet in CIDR notation, such as 192.168.0.0/24 or 2001:db8::/64.
// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="must be a subnet in CIDR notation, such as 192.168.0.0/24 or 2001:db8::/64"
// +kubebuilder:validation:MaxLength=49
type IPSubnet string

// MACAddress is an Ethernet MAC address written as six colon-separated hex pairs.
// +kubebuilder:validation:Pattern=`^([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}$`
type MACAddress string
