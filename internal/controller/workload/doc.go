// Package workload reaches a workload cluster's API server from the management cluster, the way
// Cluster API does: with the kubeconfig in the cluster's <cluster>-kubeconfig Secret.
package workload
