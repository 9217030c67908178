package controller

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/internal/testenv"
)

// The example of docs/watch-filter.md is admitted by the API server as written, and every object
// of it carries the label it tells the reader to set.
func TestWatchFilterDocsExampleIsAdmitted(t *testing.T) {
	g := NewWithT(t)
	root, err := testenv.RepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	page, err := os.ReadFile(filepath.Join(root, "docs", "watch-filter.md"))
	g.Expect(err).NotTo(HaveOccurred())
	_, rest, found := strings.Cut(string(page), "```yaml\n")
	g.Expect(found).To(BeTrue(), "docs/watch-filter.md has no yaml example")
	example, _, _ := strings.Cut(rest, "```")

	env, err := testenv.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	ns := env.NewNamespace(t)
	docs := strings.Split(example, "\n---\n")
	g.Expect(docs).To(HaveLen(3))
	for _, doc := range docs {
		u := &unstructured.Unstructured{}
		g.Expect(yaml.Unmarshal([]byte(doc), &u.Object)).To(Succeed())
		g.Expect(u.GetLabels()).To(HaveKeyWithValue(clusterv1.WatchLabel, "team-a"), "%s %s", u.GetKind(), u.GetName())
		u.SetNamespace(ns)
		g.Expect(env.Client.Create(context.Background(), u)).To(Succeed(), "%s %s", u.GetKind(), u.GetName())
	}
}
