package data

import (
	"os"
	"testing"

	"github.com/metalwire/metalwire/test/scale/measure"
)

func TestMain(m *testing.M) {
	if os.Getenv(managerEnv) != "" {
		// This binary, started again by the benchmark as the manager under measurement.
		os.Exit(runManager())
	}
	measure.Main(m, "bench-data", nil)
}
