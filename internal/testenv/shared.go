package testenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/metalwire/metalwire/internal/testneeds"
)

// SharedDir returns the project's shared reference folder (design seeds, the Ironic network_data
// schema): $METALWIRE_SHARED if set, else ../shared beside the checkout, where CI puts it.
// Without it the calling test fails under CI=true (CI puts the folder there) and is skipped
// elsewhere, saying why (testneeds.Missing): a user's clone has no such folder.
func SharedDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("METALWIRE_SHARED")
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			testneeds.Missing(t, "the reference files were not found: %v", err)
		}
		dir = filepath.Join(root, "..", "shared")
	}
	if _, err := os.Stat(dir); err != nil { //nolint:gosec // the folder is the developer's own choice, read by tests only
		testneeds.Missing(t, "the shared reference folder %s is not there (CI puts it beside the checkout; set METALWIRE_SHARED to use another)", dir)
	}
	return dir
}
