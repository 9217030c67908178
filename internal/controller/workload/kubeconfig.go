package workload

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ClientFunc reaches the API server of the workload cluster named by cluster (its Cluster's
// namespace and name). Reconcilers take one as a field so that tests, and a manager with
// Cluster API's ClusterCache, can hand in their own.
type ClientFunc func(ctx context.Context, cluster client.ObjectKey) (client.Client, error)

// FromKubeconfigSecret returns a ClientFunc that reads Cluster API's <cluster>-kubeconfig Secret
// (kubeconfig under key "value") with reader and builds a client from it (Kubernetes' own kinds).
func FromKubeconfigSecret(reader client.Reader) ClientFunc {
	return func(ctx context.Context, cluster client.ObjectKey) (client.Client, error) {
		secret := &corev1.Secret{}
		key := client.ObjectKey{Namespace: cluster.Namespace, Name: cluster.Name + "-kubeconfig"}
		if err := reader.Get(ctx, key, secret); err != nil {
			return nil, fmt.Errorf("reading the workload cluster's kubeconfig Secret %s: %w", key, err)
		}
		data, ok := secret.Data["value"]
		if !ok {
			return nil, fmt.Errorf("secret %s has no key value (the kubeconfig)", key)
		}
		cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
		if err != nil {
			return nil, fmt.Errorf("parsing the kubeconfig in Secret %s: %w", key, err)
		}
		return client.New(cfg, client.Options{})
	}
}
