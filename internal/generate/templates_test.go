package generate_test

import (
	"context"
	"os"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/pkg/generate"
)

// Phase 2's IPPools, Metal3DataTemplates, KubeadmControlPlane and KubeadmConfigTemplate are
// accepted by the API server as generated.
func TestTemplatesAreAcceptedByTheAPIServer(t *testing.T) {
	g := NewWithT(t)
	data, err := os.ReadFile("../../pkg/generate/testdata/seed.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	f, err := generate.Parse(data)
	g.Expect(err).NotTo(HaveOccurred())
	ns := env.NewNamespace(t)
	out, err := generate.Templates(f, generate.Options{Cluster: "demo", Namespace: ns, KubernetesVersion: "v1.34.1"})
	g.Expect(err).NotTo(HaveOccurred())
	for _, doc := range strings.Split(string(out), "---\n") {
		u := &unstructured.Unstructured{}
		g.Expect(yaml.Unmarshal([]byte(doc), &u.Object)).To(Succeed())
		g.Expect(env.Client.Create(context.Background(), u)).To(Succeed(), "%s %s", u.GetKind(), u.GetName())
	}
}
