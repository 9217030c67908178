package migrate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	infrav1beta1 "github.com/metalwire/metalwire/api/infrastructure/v1beta1"
)

func TestMigrateToV1beta1(t *testing.T) {
	tests := []struct {
		name, in            string
		wantAPIVersion      string
		wantYAML, notYAML   []string
		wantMustChangePaths []string
		wantWarningPaths    []string
	}{{
		name: "diskFormat goes back to v1beta1's format",
		in: `apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Machine
metadata: {name: m, namespace: ns, labels: {a: b}}
spec:
  image: {url: http://i/u.qcow2, checksum: http://i/u.sum, checksumType: sha256, diskFormat: qcow2}
`,
		wantAPIVersion: "infrastructure.cluster.x-k8s.io/v1beta1",
		wantYAML:       []string{"    format: qcow2\n", "  labels:\n    a: b\n", "  namespace: ns\n"},
		notYAML:        []string{"diskFormat", "status", "creationTimestamp", "conversion-data"},
	}, {
		name: "a field v1beta1 lacks is named",
		in: `apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3DataTemplate
metadata: {name: t}
spec:
  clusterName: c
  metaData:
    strings: [{key: k, value: v}]
    ipAddresses: [{key: ip, start: 192.168.0.10, end: 192.168.0.20, subnet: 192.168.0.0/24}]
`,
		wantAPIVersion:      "infrastructure.cluster.x-k8s.io/v1beta1",
		wantYAML:            []string{"    - key: k\n      value: v\n"},
		notYAML:             []string{"ipAddresses"},
		wantMustChangePaths: []string{"spec.metaData.ipAddresses"},
	}, {
		name: "a kind CAPM3 never had stays v1beta2",
		in: `apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3PreprovisioningDataTemplate
metadata: {name: p}
spec: {}
`,
		wantAPIVersion:   "infrastructure.cluster.x-k8s.io/v1beta2",
		wantWarningPaths: []string{"apiVersion"},
	}, {
		name: "Cluster API's kinds stay v1beta2",
		in: `apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: c}
spec: {}
`,
		wantAPIVersion: "cluster.x-k8s.io/v1beta2",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			res, err := ToVersion([]byte(tt.in), ToV1beta1)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(res.Documents).To(HaveLen(1))
			d := res.Documents[0]
			g.Expect(d.APIVersion).To(Equal(tt.wantAPIVersion))
			g.Expect(string(d.YAML)).To(ContainSubstring("apiVersion: " + tt.wantAPIVersion + "\n"))
			for _, s := range tt.wantYAML {
				g.Expect(string(d.YAML)).To(ContainSubstring(s))
			}
			for _, s := range tt.notYAML {
				g.Expect(string(d.YAML)).NotTo(ContainSubstring(s))
			}
			g.Expect(paths(d.MustChange)).To(ConsistOf(tt.wantMustChangePaths))
			g.Expect(paths(d.Warnings)).To(ConsistOf(tt.wantWarningPaths))
		})
	}
}

func TestMigrateToRefusesUnknownTargets(t *testing.T) {
	_, err := ToVersion([]byte("kind: X\n"), "v1alpha4")
	NewWithT(t).Expect(err).To(MatchError(`--to "v1alpha4": choose v1beta2 or v1beta1`))
}

// metal3-dev-env's v1beta1 templates, written by --to v1beta1, mean what --to v1beta2 writes:
// read as the API server stores them (v1beta2), the specs are equal.
func TestMigrateToV1beta1KeepsMetal3DevEnvTemplates(t *testing.T) {
	g := NewWithT(t)
	in, err := os.ReadFile(filepath.Join("..", "..", "test", "fixtures", "metal3-dev-env", "v1beta1.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	v2, err := ToVersion(in, ToV1beta2)
	g.Expect(err).NotTo(HaveOccurred())
	v1, err := ToVersion(in, ToV1beta1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(v1.MustChange()).To(BeEmpty())
	g.Expect(v1.Documents).To(HaveLen(len(v2.Documents)))
	g.Expect(v1.Documents).To(HaveLen(4))
	for i, d := range v1.Documents {
		g.Expect(d.APIVersion).To(Equal(infrav1beta1.GroupVersion.String()))
		newPair := v1beta1Kinds[d.Kind]
		g.Expect(newPair).NotTo(BeNil(), d.Kind)
		want, _ := newPair()
		got, spoke := newPair()
		g.Expect(yaml.UnmarshalStrict(v2.Documents[i].YAML, want)).To(Succeed())
		g.Expect(yaml.UnmarshalStrict(d.YAML, spoke)).To(Succeed(), "%s", d.YAML)
		g.Expect(spoke.ConvertTo(got)).To(Succeed())
		wantMap, err := toMap(want)
		g.Expect(err).NotTo(HaveOccurred())
		gotMap, err := toMap(got)
		g.Expect(err).NotTo(HaveOccurred())
		// v1beta1 shows cloudProviderEnabled's negation as noCloudProvider too (as upstream's
		// conversion does); stored back, the pair says the same as cloudProviderEnabled alone.
		if spec, ok := gotMap["spec"].(map[string]any); ok {
			if no, ok := spec["noCloudProvider"].(bool); ok && spec["cloudProviderEnabled"] == !no {
				delete(spec, "noCloudProvider")
			}
			// nodeReuse: false is both CRDs' default: the API server stores it either way.
			if reuse, ok := spec["nodeReuse"].(bool); ok && !reuse {
				delete(spec, "nodeReuse")
			}
		}
		g.Expect(cmp.Diff(wantMap["spec"], gotMap["spec"])).To(BeEmpty(), "%s", d.Object)
	}
}

func paths(notes []Note) []string {
	out := []string{}
	for _, n := range notes {
		out = append(out, n.Path)
	}
	return out
}
