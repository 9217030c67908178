// Package release makes metalwire's clusterctl artifacts: infrastructure-components.yaml rendered
// from config/default with kustomize's library, metadata.yaml mapping our release series to Cluster
// API's contract, and cluster-template.yaml made from examples/cluster with clusterctl variables.
// `make release-manifests` runs it through hack/release.
package release
