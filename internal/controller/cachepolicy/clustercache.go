package cachepolicy

import (
	"context"
	"fmt"

	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/core/setup"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"
)

// NewClusterCache adds Cluster API's ClusterCache to mgr: one client and cache per workload
// cluster, connected through the cluster's <cluster>-kubeconfig Secret once its infrastructure
// is provisioned, health-checked, and dropped when the cluster goes away. The Metal3Machine
// controller reaches workload Nodes through it. A process that also runs Cluster API's own
// controllers (dev mode) makes one and hands it to both: a manager holds one ClusterCache.
//
// The kubeconfig Secrets are read from the API server directly (the manager's cache holds only
// the Secrets metalwire writes; see ByObject), once per connection.
func NewClusterCache(ctx context.Context, mgr ctrl.Manager, userAgent string, concurrency int) (clustercache.ClusterCache, error) {
	cc, err := clustercache.SetupWithManager(ctx, mgr, clustercache.Options{
		SecretClient: mgr.GetAPIReader(),
		Cache:        setup.ClusterCacheCacheOptions(),
		Client:       setup.ClusterCacheClientOptions(userAgent, 20, 30),
	}, controller.Options{MaxConcurrentReconciles: max(concurrency, 1)})
	if err != nil {
		return nil, fmt.Errorf("cluster-api ClusterCache: %w", err)
	}
	return cc, nil
}
