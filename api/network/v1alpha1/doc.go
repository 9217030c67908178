// Package v1alpha1 holds the network.metalwire.io kinds of switch-port automation (the fabric):
// NetworkDevice (the switches and how to reach them), NIC (one per host: which switch port each
// of its network cards is cabled to) and ClusterNetwork (the VLANs a cluster's hosts are put in).
// They follow the Metal3 "automatic network configuration" proposal, with its metadata fields
// moved to spec and its inline credentials replaced by Secret references.
//
// Validation that one object can decide is in the CRDs as schema bounds and CEL rules; checks
// across objects (a NIC cabled to a switch its NetworkDevice lacks) are reported by the fabric
// controller in the ClusterNetwork's NICsValid condition.
//
// +kubebuilder:object:generate=true
// +groupName=network.metalwire.io
package v1alpha1
