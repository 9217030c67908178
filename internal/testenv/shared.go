package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// SharedDir returns the project's shared reference folder (design seeds, the Ironic network_data
// schema): $METALWIRE_SHARED if set, else ../shared beside the checkout, where CI puts it.
// Without it the calling test is skipped, saying why.
func SharedDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("METALWIRE_SHARED")
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			t.Skipf("skipped: reference files not found: %v", err)
		}
		dir = filepath.Join(root, "..", "shared")
	}
	if _, err := os.Stat(dir); err != nil { //nolint:gosec // the folder is the developer's own choice, read by tests only
		t.Skipf("skipped: the shared reference folder %s is not there (CI puts it beside the checkout; set METALWIRE_SHARED to use another)", dir)
	}
	return dir
}
