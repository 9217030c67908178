// Package testneeds is how a test says it cannot find something it needs (a Debian package, a
// built tool, root): under CI (CI=true), where `make test` installs everything, that is a
// failure; anywhere else the test is skipped, saying why. Every test goes through Missing, so
// no test can skip an assertion in CI.
package testneeds

import (
	"fmt"
	"os"
	"testing"
)

// Missing stops the test: it fails under CI=true and is skipped otherwise, with the message.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and %s", msg)
	}
	t.Skipf("skipped: %s", msg)
}
