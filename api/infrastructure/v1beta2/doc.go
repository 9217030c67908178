// Package v1beta2 holds metalwire's Cluster API infrastructure kinds (group
// infrastructure.cluster.x-k8s.io): Metal3Cluster, Metal3Machine, their templates, and the
// Metal3DataTemplate -> Metal3DataClaim -> Metal3Data chain, plus
// Metal3PreprovisioningDataTemplate. JSON names, enums and defaults follow upstream CAPM3 v1beta2,
// so existing manifests apply unchanged; metalwire's additions are extra optional fields.
//
// +kubebuilder:object:generate=true
// +groupName=infrastructure.cluster.x-k8s.io
package v1beta2
