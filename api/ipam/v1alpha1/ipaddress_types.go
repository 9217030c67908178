package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Upstream's webhook also refuses changes to the references' namespace and kind. The API server
// refuses CRDs whose CEL rules compare that many unbounded strings (ObjectReference has no
// maxLength), and the controllers read only the names, so only the names are kept immutable.
//
// +kubebuilder:validation:XValidation:rule="!has(self.gateway) || !isIP(self.address) || !isIP(self.gateway) || ip(self.address).family() == ip(self.gateway).family()",message="gateway must be of the same address family as address",fieldPath=".gateway"
// +kubebuilder:validation:XValidation:rule="!has(self.prefix) || self.prefix <= 32 || !isIP(self.address) || ip(self.address).family() == 6",message="prefix must be between 0 and 32 for an IPv4 address",fieldPath=".prefix"

// IPAddressSpec is one address handed out by an IPPool, with what goes with it. The address and
// the names of the pool and claim are immutable: the object's name is derived from the address,
// and the pool's allocations are keyed by claim name.
type IPAddressSpec struct {
	// Claim is the IPClaim (or Cluster API IPAddressClaim) this address was given to.
	// +kubebuilder:validation:XValidation:rule="has(self.name) && size(self.name) > 0",message="claim.name must name the claim this address was given to"
	// +kubebuilder:validation:XValidation:rule="self.name == oldSelf.name",message="claim.name is immutable: the pool keys its allocations by claim; delete the IPAddress to release the address instead"
	Claim corev1.ObjectReference `json:"claim"`

	// Pool is the IPPool this address comes from.
	// +kubebuilder:validation:XValidation:rule="has(self.name) && size(self.name) > 0",message="pool.name must name the IPPool this address comes from"
	// +kubebuilder:validation:XValidation:rule="self.name == oldSelf.name",message="pool.name is immutable: the address belongs to that pool; delete the IPAddress to release the address instead"
	Pool corev1.ObjectReference `json:"pool"`

	// Prefix is the network mask length (0-32 for IPv4, 0-128 for IPv6).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=128
	// +optional
	Prefix int `json:"prefix,omitempty"`

	// Gateway is the default gateway.
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="gateway must be an IPv4 or IPv6 address such as 192.168.0.10 or 2001:db8::10"
	// +optional
	Gateway *IPAddressStr `json:"gateway,omitempty"`

	// Address is the IP address.
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="address must be an IPv4 or IPv6 address such as 192.168.0.10 or 2001:db8::10"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="address is immutable: the object is named after it; delete the IPAddress and claim again instead"
	Address IPAddressStr `json:"address"`

	// DNSServers are the DNS servers.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:XValidation:rule="isIP(self)",message="each dnsServers entry must be an IPv4 or IPv6 address such as 192.168.0.10 or 2001:db8::10"
	// +optional
	DNSServers []IPAddressStr `json:"dnsServers,omitempty"`
}

// IPAddress is an address handed out by an IPPool to a claim. Its name is
// IPAddressName(pool namePrefix, address), so the API server refuses a second object for the
// same address in a namespace: that is what makes a double allocation impossible.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=ipaddresses,scope=Namespaced,categories=metal3,shortName=ipa;ipaddress;m3ipa;m3ipaddress;m3ipaddresses;metal3ipa;metal3ipaddress;metal3ipaddresses
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Address",type="string",JSONPath=".spec.address",description="IP address"
// +kubebuilder:printcolumn:name="Prefix",type="integer",JSONPath=".spec.prefix",description="Network mask length"
// +kubebuilder:printcolumn:name="Pool",type="string",JSONPath=".spec.pool.name",description="IPPool the address comes from"
// +kubebuilder:printcolumn:name="Claim",type="string",JSONPath=".spec.claim.name",description="Claim holding the address"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type IPAddress struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec IPAddressSpec `json:"spec"`
}

// IPAddressList is a list of IPAddresses.
//
// +kubebuilder:object:root=true
type IPAddressList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []IPAddress `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &IPAddress{}, &IPAddressList{})
}
