package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/metalwire/metalwire/internal/devenv"
	"github.com/metalwire/metalwire/internal/simulator"
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

// Short simulator delays keep the suite quick on two cores; every state still goes by.
var delays = simulator.Delays{
	Registering:    100 * time.Millisecond,
	Inspecting:     100 * time.Millisecond,
	Provisioning:   200 * time.Millisecond,
	Deprovisioning: 200 * time.Millisecond,
}

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "metalwire-e2e-")
	if err != nil {
		return 0, err
	}
	keep := false
	defer func() {
		if !keep {
			_ = os.RemoveAll(dir)
		}
	}()
	env, err = devenv.Start(context.Background(), devenv.Options{
		Dir:       dir,
		Hosts:     clusterHosts,
		Namespace: ns,
		Apply:     []string{examples},
		Delays:    delays,
	})
	if err != nil {
		return 0, err
	}
	code := m.Run()
	if code != 0 {
		fmt.Fprintln(os.Stderr, "e2e: the controllers' log is", filepath.Join(dir, "manager.log"), "(kept)")
		keep = true
	}
	return code, env.Stop()
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
