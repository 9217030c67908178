package cachepolicy

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// RenderedSecret is an empty metadata-only Secret (metav1.PartialObjectMetadata), the only
// form in which the rendered-Secret cache (NewRenderedSecrets) may be read or watched: a
// *corev1.Secret read from it would start an informer holding their data.
func RenderedSecret() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return m
}

// NewRenderedSecrets adds to mgr the cache of the Secrets a Metal3Data renders (labelled
// infrav1.DataSecretRenderedLabel), holding their metadata only: names, labels, owners and the
// digest annotation, which is all the Metal3Data controller reads of them from memory (that they
// exist, whose they are, what they were rendered from). Its watch is a metadata-only watch, so the
// API server does not send their data either. Read and watch it only with RenderedSecret().
//
// It is a cache of its own because controller-runtime's cache chooses a label selector by kind,
// whatever the form it is read in: the manager's cache (ByObject) selects BMO's label without
// this one for whole Secrets, this one selects this label for their metadata. base is the
// manager's cache options: the same namespaces, resync period and transform. It starts and syncs
// with the manager's cache, before any controller.
func NewRenderedSecrets(mgr ctrl.Manager, base cache.Options) (cache.Cache, error) {
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		HTTPClient:           mgr.GetHTTPClient(),
		Scheme:               mgr.GetScheme(),
		Mapper:               mgr.GetRESTMapper(),
		SyncPeriod:           base.SyncPeriod,
		DefaultNamespaces:    base.DefaultNamespaces,
		DefaultLabelSelector: labels.SelectorFromSet(labels.Set{infrav1.DataSecretRenderedLabel: infrav1.DataSecretRenderedLabelValue}),
		DefaultTransform:     Transform(),
	})
	if err != nil {
		return nil, fmt.Errorf("the rendered-Secret cache: %w", err)
	}
	if err := mgr.Add(managedCache{c}); err != nil {
		return nil, fmt.Errorf("the rendered-Secret cache: %w", err)
	}
	return c, nil
}

// managedCache puts a cache in the manager's group of caches (which it recognises by GetCache):
// started, and synced, before the controllers start.
type managedCache struct{ cache.Cache }

func (c managedCache) GetCache() cache.Cache { return c.Cache }
