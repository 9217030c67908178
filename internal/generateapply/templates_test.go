package generateapply_test

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

// The phase 2 section of docs/generate.md shows the KubeadmConfigTemplate --templates prints for
// the seed's node pool, and a Metal3MachineTemplate and MachineDeployment the API server accepts.
func TestDocsPhase2Example(t *testing.T) {
	g := NewWithT(t)
	data, err := os.ReadFile("../../docs/generate.md")
	g.Expect(err).NotTo(HaveOccurred())
	doc := string(data)
	seed, err := os.ReadFile("../../pkg/generate/testdata/seed.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	f, err := generate.Parse(seed)
	g.Expect(err).NotTo(HaveOccurred())
	out, err := generate.Templates(f, generate.Options{Cluster: "demo", Namespace: "metal3", KubernetesVersion: "v1.34.1"})
	g.Expect(err).NotTo(HaveOccurred())
	docs := strings.Split(string(out), "---\n")
	g.Expect(block(t, doc, "## Phase 2", "yaml")).To(Equal(docs[len(docs)-1]), "the page's KubeadmConfigTemplate is the printed one")

	ns := env.NewNamespace(t)
	yours := block(t, doc, "The Metal3MachineTemplates and MachineDeployments are yours", "yaml")
	for _, d := range strings.Split(yours, "---\n") {
		u := &unstructured.Unstructured{}
		g.Expect(yaml.Unmarshal([]byte(d), &u.Object)).To(Succeed())
		u.SetNamespace(ns)
		g.Expect(env.Client.Create(context.Background(), u)).To(Succeed(), "%s %s as the page writes it", u.GetKind(), u.GetName())
	}
}
