// Package cachepolicy is what the manager's caches hold and how: which Secrets are cached
// whole (ByObject), the metadata-only cache of the Secrets a Metal3Data renders
// (NewRenderedSecrets), what every cached object is trimmed to and which of its strings are
// shared (Transform), and Cluster API's ClusterCache for workload clusters (NewClusterCache). It
// imports no controller, so the image's manager, Cluster API's dev-mode process and a
// controller's own tests build their caches from the same policy.
package cachepolicy
