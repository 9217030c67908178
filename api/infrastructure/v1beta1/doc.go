// Package v1beta1 serves CAPM3's infrastructure.cluster.x-k8s.io/v1beta1 kinds, the version most
// existing Metal3 manifests and GitOps repositories are written in. The API server stores only
// v1beta2 (the hub); objects written or read as v1beta1 go through the conversion webhook, which
// calls ConvertTo/ConvertFrom here. Field names and JSON follow upstream CAPM3 v1beta1 exactly so
// its manifests apply unchanged; fields one version cannot hold travel in an annotation (see
// conversion_data.go), so a round trip through the other version loses nothing.
//
// +kubebuilder:object:generate=true
// +groupName=infrastructure.cluster.x-k8s.io
package v1beta1
