package labelsync

import (
	"context"

	"sigs.k8s.io/cluster-api/controllers/remote"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// KubeconfigClient reaches a workload cluster through its <cluster>-kubeconfig Secret, as Cluster
// API writes it, read with reader (an uncached reader: Secrets are not worth caching). Each call
// makes a new client; a manager with Cluster API's ClusterCache passes its client instead.
func KubeconfigClient(reader client.Reader) func(ctx context.Context, cluster client.ObjectKey) (client.Client, error) {
	return func(ctx context.Context, cluster client.ObjectKey) (client.Client, error) {
		cfg, err := remote.RESTConfig(ctx, ControllerName, reader, cluster)
		if err != nil {
			return nil, err
		}
		return client.New(cfg, client.Options{})
	}
}
