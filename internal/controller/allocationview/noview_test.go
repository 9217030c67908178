package allocationview_test

import (
	"context"
	"sync/atomic"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/allocationview"
	"github.com/metalwire/metalwire/pkg/ipam"
)

// countingReader counts the reads that reach the API server.
type countingReader struct {
	client.Reader
	gets *atomic.Int32
}

func (c countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets.Add(1)
	return c.Reader.Get(ctx, key, obj, opts...)
}

// A namespace whose pools carry no view key costs one read of the ConfigMap, not one per event
// (every IPAddress written there is one); the view still comes when a pool is annotated, and
// goes when the annotation does; a view of ours left from before the manager started is removed
// by the first reconcile.
func TestANamespaceWithoutAViewIsReadOnce(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	var gets atomic.Int32
	r := &allocationview.Reconciler{Client: env.Client, APIReader: countingReader{env.Client, &gets}}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: ipam.AllocationViewName}}
	view := func() (*corev1.ConfigMap, error) {
		cm := &corev1.ConfigMap{}
		return cm, env.Client.Get(ctx, req.NamespacedName, cm)
	}

	// A view of ours from an earlier run, with nothing annotated any more.
	g.Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ipam.AllocationViewName,
		Labels: map[string]string{allocationview.ViewLabel: "true"}}, Data: map[string]string{"old": "{}"}})).To(Succeed())
	pool := &ipamv1.IPPool{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain"},
		Spec: ipamv1.IPPoolSpec{NamePrefix: "plain", Prefix: 24, Gateway: ptr.To(ipamv1.IPAddressStr("192.168.0.1")),
			Pools: []ipamv1.Pool{{Start: ptr.To(ipamv1.IPAddressStr("192.168.0.10")), End: ptr.To(ipamv1.IPAddressStr("192.168.0.20"))}}},
	}
	g.Expect(env.Client.Create(ctx, pool)).To(Succeed())
	for range 5 {
		_, err := r.Reconcile(ctx, req)
		g.Expect(err).NotTo(HaveOccurred())
	}
	_, err := view()
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the stale view was not removed: %v", err)
	g.Expect(gets.Load()).To(BeEquivalentTo(1), "five events in a namespace without a view read the ConfigMap %d times", gets.Load())

	// Annotated: the view is written.
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pool), pool)).To(Succeed())
	pool.Annotations = map[string]string{ipam.AllocationViewKeyAnnotation: "ny-1000-192.168.0.0/24"}
	g.Expect(env.Client.Update(ctx, pool)).To(Succeed())
	_, err = r.Reconcile(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	cm, err := view()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cm.Data).To(HaveKeyWithValue(ipam.ConfigMapKey("ny-1000-192.168.0.0/24"), "{}"))

	// The annotation goes: so does the view, and then events cost no read again.
	pool.Annotations = nil
	g.Expect(env.Client.Update(ctx, pool)).To(Succeed())
	_, err = r.Reconcile(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = view()
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the view outlived the last annotation: %v", err)
	before := gets.Load()
	for range 3 {
		_, err := r.Reconcile(ctx, req)
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(gets.Load()).To(Equal(before))
}
