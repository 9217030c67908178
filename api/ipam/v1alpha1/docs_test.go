package v1alpha1_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// The manifests in docs/api must be accepted as written: a reader copies them.
func TestDocumentedManifestsAreAccepted(t *testing.T) {
	block := regexp.MustCompile("(?s)```yaml\n(.*?)```")
	for _, page := range []string{"ippool.md", "ipclaim-ipaddress.md"} {
		text, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "api", page))
		if err != nil {
			t.Fatal(err)
		}
		blocks := block.FindAllStringSubmatch(string(text), -1)
		if len(blocks) == 0 {
			t.Fatalf("%s has no yaml example", page)
		}
		for i, b := range blocks {
			t.Run(fmt.Sprintf("%s example %d", page, i+1), func(t *testing.T) {
				g := NewWithT(t)
				manifest := b[1]
				if strings.HasPrefix(manifest, "spec:") { // a fragment of a pool
					manifest = "apiVersion: ipam.metal3.io/v1alpha1\nkind: IPPool\n" + manifest
				}
				u := &unstructured.Unstructured{}
				g.Expect(yaml.Unmarshal([]byte(manifest), &u.Object)).To(Succeed())
				// Examples name their own namespace and object; run them side by side here.
				u.SetNamespace(namespace)
				u.SetName("")
				u.SetGenerateName("doc-")
				g.Expect(env.Client.Create(context.Background(), u)).To(Succeed(), manifest)
			})
		}
	}
}
