package labelsync

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// KubeconfigClient reaches a workload cluster through its <cluster>-kubeconfig Secret (the
// kubeconfig under key "value", as Cluster API writes it), read with reader: an uncached reader,
// since Secrets are not worth caching. Each call makes a new client; a manager with Cluster API's
// ClusterCache passes its client instead.
func KubeconfigClient(reader client.Reader) func(ctx context.Context, cluster client.ObjectKey) (client.Client, error) {
	return func(ctx context.Context, cluster client.ObjectKey) (client.Client, error) {
		secret := &corev1.Secret{}
		name := cluster.Name + "-kubeconfig"
		if err := reader.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: name}, secret); err != nil {
			return nil, err
		}
		data, ok := secret.Data["value"]
		if !ok {
			return nil, fmt.Errorf("secret %s has no key value", name)
		}
		cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
		if err != nil {
			return nil, fmt.Errorf("secret %s: %w", name, err)
		}
		return client.New(cfg, client.Options{})
	}
}
