// Package schematest checks documents against the schemas of the consumers metalwire writes for,
// for tests: today the network_data.json schema Ironic enforces at node registration. It lives
// apart from the packages that produce network data so that each of their tests checks output
// against the one compiled schema rather than a copy of the loader.
package schematest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/internal/testenv"
)

var (
	once     sync.Once
	compiled *jsonschema.Schema
	loadErr  error
)

// IronicNetworkData compiles <shared>/schemas/network_data.schema.json once. Without the shared
// folder the test is skipped (testenv.SharedDir says why).
func IronicNetworkData(t testing.TB) *jsonschema.Schema {
	t.Helper()
	dir := testenv.SharedDir(t)
	once.Do(func() {
		path := filepath.Join(dir, "schemas", "network_data.schema.json")
		f, err := os.Open(path)
		if err != nil {
			loadErr = err
			return
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			loadErr = fmt.Errorf("reading %s: %w", path, err)
			return
		}
		c := jsonschema.NewCompiler()
		if loadErr = c.AddResource("network_data.schema.json", doc); loadErr != nil {
			return
		}
		compiled, loadErr = c.Compile("network_data.schema.json")
	})
	if loadErr != nil {
		t.Fatalf("compiling the Ironic network_data schema: %v", loadErr)
	}
	return compiled
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
