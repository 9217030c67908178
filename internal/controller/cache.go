package controller

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// CacheByObject narrows what the manager's cache holds. Secrets: only those labelled
// environment.metal3.io=baremetal, the label BMO's own cache selects and that metalwire puts on
// every Secret it writes (rendered metaData, networkData, pre-provisioning network data). The
// Secrets metalwire is pointed at (a workload cluster's kubeconfig) are read from the API
// server directly (the manager's APIReader), one at a time, so the manager never lists or
// watches every Secret of the cluster.
func CacheByObject() map[client.Object]cache.ByObject {
	return map[client.Object]cache.ByObject{
		&corev1.Secret{}: {Label: labels.SelectorFromSet(labels.Set{infrav1.BMOEnvironmentLabel: infrav1.BMOEnvironmentLabelValue})},
	}
}

// CacheTransform is what the manager's cache does to every object before keeping it: it drops
// managedFields, which no controller reads; the cache then holds about half the bytes, and
// updates sent from cached objects are smaller (the API server keeps the managedFields a
// request leaves out). The cache-footprint test measures what it keeps.
func CacheTransform() toolscache.TransformFunc {
	return cache.TransformStripManagedFields()
}
