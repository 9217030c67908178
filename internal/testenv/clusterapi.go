package testenv

import (
	"context"
	"os"
	"path/filepath"

	"github.com/metalwire/metalwire/internal/devenv"
)

// BuildClusterAPI builds metalwire-capi, the program dev mode runs Cluster API's controllers in,
// from this checkout into dir and names it in $METALWIRE_CAPI, so that dev mode started by the
// tests runs the code under test rather than a copy found beside the test binary or on PATH.
// Tests that start dev mode call it first (TestMain, or with t.TempDir()).
func BuildClusterAPI(dir string) error {
	root, err := RepoRoot()
	if err != nil {
		return err
	}
	path := filepath.Join(dir, devenv.ClusterAPIBinary)
	if err := devenv.BuildClusterAPI(context.Background(), root, path); err != nil {
		return err
	}
	return os.Setenv(devenv.ClusterAPIBinaryEnv, path)
}
