package v1beta2_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/internal/testenv"
)

// installSameNamespacePolicy applies config/admission's policy as shipped (clusterctl installs it
// with the CRDs) and waits until the API server enforces it.
func installSameNamespacePolicy(t *testing.T) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	root, err := testenv.RepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	data, err := os.ReadFile(filepath.Join(root, "config", "admission", "same-namespace-references.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		obj := &unstructured.Unstructured{}
		err := dec.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			break
		}
		g.Expect(err).NotTo(HaveOccurred())
		if len(obj.Object) == 0 {
			continue
		}
		if err := env.Client.Create(ctx, obj); !apierrors.IsAlreadyExists(err) {
			g.Expect(err).NotTo(HaveOccurred())
		}
	}
	// A policy takes effect once the API server has compiled it: probe with a refused object.
	probe := m3mHeader + `
metadata: {name: policy-probe, namespace: default}
spec:
  userData: {name: u, namespace: kube-system}` + ubuntuImage
	g.Eventually(func() bool {
		obj := &unstructured.Unstructured{}
		g.Expect(yaml.Unmarshal([]byte(probe), &obj.Object)).To(Succeed())
		err := env.Client.Create(ctx, obj)
		if err == nil {
			_ = env.Client.Delete(ctx, obj)
			return false
		}
		return apierrors.IsInvalid(err)
	}, 30*time.Second, 200*time.Millisecond).Should(BeTrue(), "the policy is enforced")
}

// References to Secrets and data templates in another namespace are refused when the object is
// written, naming the field, as upstream CAPM3's webhooks refuse them; the same namespace, or
// none, is accepted.
func TestReferencesInAnotherNamespaceRefused(t *testing.T) {
	installSameNamespacePolicy(t)
	machine := func(spec string) string { return m3mHeader + "\nspec:\n" + spec + ubuntuImage }
	template := func(spec string) string {
		return `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3MachineTemplate
spec:
  template:
    spec:
` + indent("  "+spec+ubuntuImage, 4)
	}
	cases := []admissionCase{
		{name: "userData in another namespace", given: machine("  userData: {name: u, namespace: kube-system}"),
			want: []string{"spec.userData.namespace: Forbidden: kube-system is not this Metal3Machine's namespace default", "leave namespace empty"}},
		{name: "metaData in another namespace", given: machine("  metaData: {name: m, namespace: other}"),
			want: []string{"spec.metaData.namespace: Forbidden: other is not this Metal3Machine's namespace default"}},
		{name: "networkData in another namespace", given: machine("  networkData: {name: nd, namespace: other}"),
			want: []string{"spec.networkData.namespace: Forbidden"}},
		{name: "dataTemplate in another namespace", given: machine("  dataTemplate: {name: t, namespace: other}"),
			want: []string{"spec.dataTemplate.namespace: Forbidden", "the Metal3DataTemplate must be in the same namespace"}},
		{name: "references in the machine's own namespace", given: machine("  userData: {name: u, namespace: default}\n  metaData: {name: m, namespace: default}\n  networkData: {name: nd}\n  dataTemplate: {name: t}")},
		{name: "template: networkData in another namespace", given: template("networkData: {name: nd, namespace: other}"),
			want: []string{"spec.template.spec.networkData.namespace: Forbidden: other is not this Metal3MachineTemplate's namespace default"}},
		{name: "template: userData in its own namespace", given: template("userData: {name: u, namespace: default}")},
		{name: "claim of a template in another namespace", given: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3DataClaim
spec:
  template: {name: t, namespace: other}
`, want: []string{"spec.template.namespace: Forbidden: other is not this Metal3DataClaim's namespace default"}},
		{name: "claim of a template in its own namespace", given: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3DataClaim
spec:
  template: {name: t}
`},
	}
	runAdmissionCases(t, "refs", cases)
}
