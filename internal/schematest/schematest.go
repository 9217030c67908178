// Package schematest checks what metalwire writes with the real consumers of it, for tests: the
// network_data.json schema Ironic enforces at node registration (from Debian's python3-ironic,
// unpacked into bin/ by `make test-deps`), and netplan itself (Debian's netplan.io, `netplan
// generate`). It lives apart from the packages that produce the documents so that each of their
// tests uses one compiled schema and one netplan runner rather than a copy of the loader.
//
// A test that cannot find a consumer fails when CI=true and is skipped, saying what to install,
// otherwise (Require).
package schematest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/internal/testenv"
	"github.com/metalwire/metalwire/internal/testneeds"
)

// IronicSchemaFile is where `make test-deps` unpacks Debian's python3-ironic (apt-get download,
// dpkg-deb -x), relative to the checkout: the network_data.json schema of the Ironic API.
const IronicSchemaFile = "bin/debian/python3-ironic/usr/lib/python3/dist-packages/ironic/api/controllers/v1/network-data-schema.json"

var (
	once     sync.Once
	compiled *jsonschema.Schema
	loadErr  error
)

// IronicNetworkData compiles Ironic's network_data schema once.
func IronicNetworkData(t testing.TB) *jsonschema.Schema {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, IronicSchemaFile)
	if _, err := os.Stat(path); err != nil {
		testneeds.Missing(t, "Ironic's network_data schema %s is missing (make test-deps unpacks Debian's python3-ironic into bin/)", path)
	}
	once.Do(func() {
		data, err := os.ReadFile(path)
		if err != nil {
			loadErr = err
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(fixBondModeTypo(data)))
		if err != nil {
			loadErr = fmt.Errorf("reading %s: %w", path, err)
			return
		}
		c := jsonschema.NewCompiler()
		if loadErr = c.AddResource("network-data-schema.json", doc); loadErr != nil {
			return
		}
		compiled, loadErr = c.Compile("network-data-schema.json")
	})
	if loadErr != nil {
		t.Fatalf("compiling Ironic's network_data schema: %v", loadErr)
	}
	return compiled
}

// fixBondModeTypo adds 802.3ad to the bond modes of an Ironic schema that lists 802.1ad instead
// (Ironic's original file, which Debian bookworm's Ironic 21.4 still ships: 802.1ad is VLAN
// stacking, not a bonding mode, and the kernel's LACP mode is 802.3ad; later Ironic lists
// 802.3ad). Without it every LACP bond, the common case, would fail for a typo.
func fixBondModeTypo(data []byte) []byte {
	var doc map[string]any
	if json.Unmarshal(data, &doc) != nil {
		return data // the compiler reports the broken file
	}
	defs, _ := doc["definitions"].(map[string]any)
	bond, _ := defs["l2_bond"].(map[string]any)
	props, _ := bond["properties"].(map[string]any)
	mode, _ := props["bond_mode"].(map[string]any)
	enum, _ := mode["enum"].([]any)
	for _, v := range enum {
		if v == "802.3ad" {
			return data
		}
	}
	if mode == nil {
		return data
	}
	mode["enum"] = append(enum, "802.3ad")
	out, err := json.Marshal(doc)
	if err != nil {
		return data
	}
	return out
}

// ValidateNetworkData checks a network_data document, YAML or JSON (a Secret holds either),
// against Ironic's schema.
func ValidateNetworkData(t testing.TB, doc []byte) error {
	t.Helper()
	schema := IronicNetworkData(t)
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return fmt.Errorf("network data is not YAML or JSON: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return err
	}
	return schema.Validate(inst)
}
