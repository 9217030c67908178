package v1alpha1_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// The Equinix Metal page's objects are accepted as written: a reader copies them.
func TestEquinixMetalPageObjectsAreAccepted(t *testing.T) {
	g := NewWithT(t)
	text, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "equinix-metal.md"))
	g.Expect(err).NotTo(HaveOccurred())
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(text), -1)
	g.Expect(blocks).NotTo(BeEmpty())
	ns := env.NewNamespace(t)
	kinds := []string{}
	for _, doc := range strings.Split(blocks[0][1], "\n---\n") {
		u := &unstructured.Unstructured{}
		g.Expect(yaml.Unmarshal([]byte(doc), &u.Object)).To(Succeed(), doc)
		u.SetNamespace(ns)
		g.Expect(env.Client.Create(context.Background(), u, client.DryRunAll)).To(Succeed(), doc)
		kinds = append(kinds, u.GetKind())
	}
	g.Expect(kinds).To(Equal([]string{"Secret", "NetworkDevice", "NIC", "ClusterNetwork"}))
}

// The link aggregation and access list examples of docs/fabric.md are accepted as written: a
// reader copies them.
func TestLinkAggregationExampleIsAccepted(t *testing.T) {
	exampleIsAccepted(t, "fabric-lag-example.yaml", "NetworkDevice", "NIC", "ClusterNetwork", "Metal3DataTemplate")
}

func TestACLExampleIsAccepted(t *testing.T) {
	exampleIsAccepted(t, "fabric-acl-example.yaml", "NetworkDevice", "NIC", "ClusterNetwork")
}

func exampleIsAccepted(t *testing.T, file string, wantKinds ...string) {
	g := NewWithT(t)
	text, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", file))
	g.Expect(err).NotTo(HaveOccurred())
	ns := env.NewNamespace(t)
	kinds := []string{}
	for _, doc := range strings.Split(string(text), "\n---\n") {
		u := &unstructured.Unstructured{}
		g.Expect(yaml.Unmarshal([]byte(doc), &u.Object)).To(Succeed(), doc)
		u.SetNamespace(ns)
		g.Expect(env.Client.Create(context.Background(), u, client.DryRunAll)).To(Succeed(), doc)
		kinds = append(kinds, u.GetKind())
	}
	g.Expect(kinds).To(Equal(wantKinds))
}

// The aggregates example of docs/fabric.md (a SONiC and an openconfig switch with their
// port-channel ranges) is accepted as written.
func TestAggregatesExampleIsAccepted(t *testing.T) {
	g := NewWithT(t)
	text, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "fabric.md"))
	g.Expect(err).NotTo(HaveOccurred())
	_, section, ok := strings.Cut(string(text), "### Aggregates: port-channel numbers")
	g.Expect(ok).To(BeTrue(), "fabric.md has no Aggregates section")
	block := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindStringSubmatch(section)
	g.Expect(block).NotTo(BeNil())
	u := &unstructured.Unstructured{}
	g.Expect(yaml.Unmarshal([]byte(block[1]), &u.Object)).To(Succeed())
	u.SetNamespace(env.NewNamespace(t))
	g.Expect(env.Client.Create(context.Background(), u, client.DryRunAll)).To(Succeed(), block[1])
	g.Expect(u.GetKind()).To(Equal("NetworkDevice"))
}
