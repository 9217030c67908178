package preprovisioning_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	"github.com/metalwire/metalwire/internal/schematest"
	"github.com/metalwire/metalwire/internal/testenv"
)

// docExamples reads the YAML blocks of docs/preprovisioning.md marked <!-- example: name -->.
func docExamples(t *testing.T) map[string]string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, "docs", "preprovisioning.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	examples := map[string]string{}
	var name string
	var body strings.Builder
	inBlock := false
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		line := scanner.Text()
		switch {
		case strings.HasPrefix(line, "<!-- example: "):
			name = strings.TrimSuffix(strings.TrimPrefix(line, "<!-- example: "), " -->")
		case name != "" && line == "```yaml":
			inBlock = true
		case inBlock && line == "```":
			examples[name] = body.String()
			name, inBlock = "", false
			body.Reset()
		case inBlock:
			body.WriteString(line + "\n")
		}
	}
	return examples
}

// applyExample creates every object of an example in namespace ns.
func applyExample(t *testing.T, example, ns string) {
	t.Helper()
	g := NewWithT(t)
	for _, doc := range strings.Split(example, "\n---\n") {
		u := &unstructured.Unstructured{}
		g.Expect(yaml.Unmarshal([]byte(doc), &u.Object)).To(Succeed())
		u.SetNamespace(ns)
		g.Expect(env.Client.Create(context.Background(), u)).To(Succeed(), "creating %s %s", u.GetKind(), u.GetName())
	}
}

// The guide's examples run as written and do what the guide says.
func TestDocExamplesRun(t *testing.T) {
	examples := docExamples(t)
	NewWithT(t).Expect(examples).To(HaveKey("common-pool"))
	NewWithT(t).Expect(examples).To(HaveKey("decoupled-pools"))

	t.Run("common pool", func(t *testing.T) {
		g := NewWithT(t)
		ns := newNamespace(t)
		startManager(t, ns)
		applyExample(t, examples["common-pool"], ns)
		waitRendered(t, ns, "host-0")
		g.Expect(claimedAddress(t, ns, "host-0-provisioning")).To(Equal("192.168.111.20"))
		doc := getSecret(g, ns, "host-0-preprov-networkdata").Data["networkData"]
		g.Expect(schematest.ValidateNetworkData(t, doc)).To(Succeed())
		g.Expect(parseNetworkData(g, doc).Networks).To(ConsistOf(HaveField("IPAddress", "192.168.111.20")))
	})
	t.Run("decoupled pools", func(t *testing.T) {
		g := NewWithT(t)
		ns := newNamespace(t)
		startManager(t, ns)
		applyExample(t, examples["decoupled-pools"], ns)
		waitRendered(t, ns, "host-1")
		g.Expect(claimedAddress(t, ns, "host-1-preprovisioning-pool")).To(Equal("172.22.0.100"))
		g.Expect(schematest.ValidateNetworkData(t, getSecret(g, ns, "host-1-preprov-networkdata").Data["networkData"])).To(Succeed())
		setState(t, ns, "host-1", bmov1.StateAvailable)
		claimGone(t, ns, "host-1-preprovisioning-pool")
	})
}
