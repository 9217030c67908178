package e2e

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/metalwire/metalwire/internal/devenv"
	"github.com/metalwire/metalwire/test/e2e/framework"
)

// ns is where dev mode creates its hosts and where examples/ puts everything.
const ns = "default"

// clusterHosts is what examples/cluster needs: a control plane Machine and three workers. The
// spare hosts come from examples/preprovisioning.
const clusterHosts = 4

var (
	env *devenv.Env
	// examples is the repository's examples/ folder, applied as `make demo` applies it.
	examples = filepath.Join("..", "..", "examples")
)

func TestMain(m *testing.M) {
	framework.Main(m, &env, devenv.Options{Hosts: clusterHosts, Namespace: ns, Apply: []string{examples}})
}

// needsDataTemplates skips a test that needs the Metal3DataTemplate -> Metal3Data chain when this
// build's manager does not run it: without it a machine with spec.dataTemplate is never
// provisioned, by design.
func needsDataTemplates(t *testing.T) {
	t.Helper()
	if !slices.Contains(env.Controllers, "metal3data") {
		t.Skip("needs the Metal3DataTemplate controllers (metal3datatemplate, metal3dataclaim, metal3data), which this build does not run")
	}
}
