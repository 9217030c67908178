// Package v1alpha1 holds the ipam.metal3.io kinds: IPPool, IPClaim and IPAddress, wire-compatible
// with metal3-io/ip-address-manager, plus metalwire's additive fields (excluded addresses, a
// reuse grace period, status counters and conditions).
//
// +kubebuilder:object:generate=true
// +groupName=ipam.metal3.io
package v1alpha1
