// Package v1alpha1 holds the ipam.metal3.io kinds: IPPool, IPClaim and IPAddress, wire-compatible
// with metal3-io/ip-address-manager, plus metalwire's additive fields (excluded addresses, a
// reuse grace period, status counters and conditions).
//
// Validation lives in the CRDs as OpenAPI bounds and CEL rules, so the API server refuses an
// unusable object with a message naming the field, and no webhook is needed. The constants
// (finalizers, labels, the ipAddress annotation, condition reasons) and IPAddressName are what the
// IPAM controllers and the data controller share.
//
// +kubebuilder:object:generate=true
// +groupName=ipam.metal3.io
package v1alpha1
