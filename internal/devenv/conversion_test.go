package devenv_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// Dev mode serves CAPM3's v1beta1 through its own manager's conversion webhooks, with the
// certificate it made itself: an object applied as v1beta2 reads as v1beta1, and one written
// as v1beta1 reads as v1beta2.
func TestDevModeServesCAPM3V1beta1(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()

	tmpl := &infrav1.Metal3MachineTemplate{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "demo-workers"}, tmpl)).To(Succeed())
	old := &unstructured.Unstructured{}
	old.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta1")
	old.SetKind("Metal3MachineTemplate")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(tmpl), old)).To(Succeed())
	url, _, _ := unstructured.NestedString(old.Object, "spec", "template", "spec", "image", "url")
	g.Expect(url).To(Equal(tmpl.Spec.Template.Spec.Image.URL))

	m3c := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
		"kind":       "Metal3Cluster",
		"metadata":   map[string]any{"name": "from-v1beta1", "namespace": "default"},
		"spec": map[string]any{
			"controlPlaneEndpoint": map[string]any{"host": "192.168.111.250", "port": int64(6443)},
			"noCloudProvider":      true,
		},
	}}
	g.Expect(env.Client.Create(ctx, m3c)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), m3c) })
	got := &infrav1.Metal3Cluster{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(m3c), got)).To(Succeed())
	g.Expect(got.Spec.ControlPlaneEndpoint.Host).To(Equal("192.168.111.250"))
	g.Expect(got.CloudProviderEnabled()).To(BeFalse())
}
