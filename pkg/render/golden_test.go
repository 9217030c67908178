package render_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/internal/schematest"
	"github.com/metalwire/metalwire/pkg/render"
)

var update = flag.Bool("update", false, "rewrite the golden files from the current output (review the diff!)")

// goldenCase is one folder of testdata/golden: a template, a host and the other facts
// (facts.yaml), and the expected outputs beside them.
type goldenCase struct {
	name     string
	dir      string
	template *render.Template
	facts    *render.Facts
}

// factsFile is facts.yaml: what a controller would gather besides the host.
type factsFile struct {
	Index         int                           `json:"index"`
	Machine       *render.Object                `json:"machine,omitempty"`
	Metal3Machine *render.Object                `json:"metal3machine,omitempty"`
	Pools         map[string]render.PoolAddress `json:"pools,omitempty"`
}

func loadGolden(t testing.TB) []goldenCase {
	t.Helper()
	dirs, err := filepath.Glob("testdata/golden/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	cases := make([]goldenCase, 0, len(dirs))
	for _, dir := range dirs {
		cases = append(cases, loadCase(t, dir))
	}
	return cases
}

func loadCase(t testing.TB, dir string) goldenCase {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tmpl, err := render.DecodeTemplate(read("template.yaml"))
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	host, err := render.DecodeHost(read("host.yaml"))
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	var ff factsFile
	if err := yaml.UnmarshalStrict(read("facts.yaml"), &ff); err != nil {
		t.Fatalf("%s/facts.yaml: %v", dir, err)
	}
	f := &render.Facts{Index: ff.Index, Namespace: tmpl.Namespace, Machine: ff.Machine, Metal3Machine: ff.Metal3Machine}
	f.HostFacts(host)
	refs, err := tmpl.Pools(f)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	f.Pools = render.PoolsByName(ff.Pools, refs)
	return goldenCase{name: filepath.Base(dir), dir: dir, template: tmpl, facts: f}
}

// outputs renders every format of a case; metadata.yaml only for a Metal3DataTemplate rendered
// with a Metal3Machine.
func (c goldenCase) outputs(t testing.TB) map[string][]byte {
	t.Helper()
	g := NewWithT(t)
	out := map[string][]byte{}
	nd, err := c.template.Networking(c.facts)
	g.Expect(err).NotTo(HaveOccurred())
	out["network_data.json"], err = nd.JSON()
	g.Expect(err).NotTo(HaveOccurred())
	out["network_data.yaml"], err = nd.YAML()
	g.Expect(err).NotTo(HaveOccurred())
	out["netplan.yaml"], err = nd.Netplan()
	g.Expect(err).NotTo(HaveOccurred())
	out["nmstate.yaml"], err = nd.NMState()
	g.Expect(err).NotTo(HaveOccurred())
	// A network os-net-config cannot express is refused with a reason, golden too.
	if onc, err := nd.OSNetConfig(c.facts.NICs); err != nil {
		out["os-net-config.error"] = []byte(err.Error() + "\n")
	} else {
		out["os-net-config.yaml"], out["os-net-config-mapping.yaml"] = onc.Config, onc.Mapping
	}
	if !c.template.Preprovisioning() && c.facts.Metal3Machine != nil {
		md, err := render.MetaData(c.template.MetaData, c.facts)
		g.Expect(err).NotTo(HaveOccurred())
		out["metadata.yaml"], err = render.MarshalMetaData(md)
		g.Expect(err).NotTo(HaveOccurred())
	}
	return out
}

func TestGolden(t *testing.T) {
	for _, c := range loadGolden(t) {
		t.Run(c.name, func(t *testing.T) {
			g := NewWithT(t)
			for name, got := range c.outputs(t) {
				path := filepath.Join(c.dir, name)
				if *update {
					g.Expect(os.WriteFile(path, got, 0o600)).To(Succeed())
					continue
				}
				want, err := os.ReadFile(path)
				g.Expect(err).NotTo(HaveOccurred(), "missing golden file; run go test ./pkg/render -run TestGolden -update and review it")
				g.Expect(string(got)).To(Equal(string(want)), "%s differs from its golden file", path)
			}
		})
	}
}

// TestGoldenDeterministic renders each case many times: map iteration must never leak into
// the output, or every reconcile would rewrite the Secrets.
func TestGoldenDeterministic(t *testing.T) {
	for _, c := range loadGolden(t) {
		first := c.outputs(t)
		for range 20 {
			again := c.outputs(t)
			for name := range first {
				if !bytes.Equal(again[name], first[name]) {
					t.Fatalf("%s/%s changes between renders", c.name, name)
				}
			}
		}
	}
}

// TestGoldenNetworkDataValidatesAgainstIronicSchema checks every golden network_data.json with
// the schema Ironic enforces: Ironic refuses the node's network data otherwise.
func TestGoldenNetworkDataValidatesAgainstIronicSchema(t *testing.T) {
	for _, c := range loadGolden(t) {
		t.Run(c.name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(c.dir, "network_data.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := schematest.ValidateNetworkData(t, b); err != nil {
				t.Fatalf("network_data.json is not valid for Ironic: %v", err)
			}
		})
	}
}

// validate checks a rendered document against the Ironic schema.
func validate(t testing.TB, nd *render.NetworkData) error {
	t.Helper()
	b, err := json.Marshal(nd)
	if err != nil {
		t.Fatal(err)
	}
	return schematest.ValidateNetworkData(t, b)
}
