package framework

import (
	"context"
	"os"
	"path/filepath"

	"github.com/metalwire/metalwire/internal/controlplane"
	"github.com/metalwire/metalwire/internal/devenv"
)

// BuildClusterAPI builds metalwire-capi, the program dev mode runs Cluster API's controllers in,
// from this checkout into dir and names it in $METALWIRE_CAPI, so that dev mode started by the
// tests runs the code under test rather than a copy found beside the test binary or on PATH.
// Tests that start dev mode call it first (TestMain, or with t.TempDir()); Main does.
//
// It lives here, not in internal/testenv: testenv is imported by the tests of packages dev mode
// imports, which could then not import dev mode.
func BuildClusterAPI(dir string) error {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return err
	}
	path := filepath.Join(dir, devenv.ClusterAPIBinary)
	if err := devenv.BuildClusterAPI(context.Background(), root, path); err != nil {
		return err
	}
	return os.Setenv(devenv.ClusterAPIBinaryEnv, path)
}
