package testenv

import (
	"fmt"
	"os"
	"testing"

	"github.com/metalwire/metalwire/internal/controlplane"
)

// Env is a running control plane (controlplane.Env): the tests' name for it.
type Env = controlplane.Env

// Options add to what Start sets up (controlplane.Options).
type Options = controlplane.Options

// Start and StartWith start a control plane for a test (controlplane.Start, StartWith).
var (
	Start     = controlplane.Start
	StartWith = controlplane.StartWith
)

// RepoRoot, ModuleDir and CheckControlPlane are controlplane's, for tests that need the
// checkout, a module's directory or the binaries.
var (
	RepoRoot          = controlplane.RepoRoot
	ModuleDir         = controlplane.ModuleDir
	CheckControlPlane = controlplane.CheckControlPlane
)

// Main runs a package's tests against one shared control plane: call it from TestMain. It sets
// *env before the tests run and stops the control plane after them.
func Main(m *testing.M, env **Env) {
	MainWith(m, env, Options{})
}

// MainWith is Main with options (ServeConversion for tests of CAPM3's v1beta1).
func MainWith(m *testing.M, env **Env, opts Options) {
	started, err := StartWith(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*env = started
	code := m.Run()
	if err := started.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "testenv: stopping:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
