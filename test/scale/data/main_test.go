package data

import (
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/metalwire/metalwire/internal/testenv"
)

// enableEnv must be set for the benchmark to run; make bench-data sets it.
const enableEnv = "METALWIRE_SCALE"

func TestMain(m *testing.M) {
	if os.Getenv(managerEnv) != "" {
		// This binary, started again by the benchmark as the manager under measurement.
		os.Exit(runManager())
	}
	if os.Getenv(enableEnv) == "" {
		fmt.Printf("data-templating scale benchmark skipped: set %s=1 or run make bench-data\n", enableEnv)
		os.Exit(0)
	}
	// The benchmark's own caches would otherwise complain that no logger is set.
	ctrl.SetLogger(logr.Discard())
	if _, err := testenv.CheckControlPlane(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
