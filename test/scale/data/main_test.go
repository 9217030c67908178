package data

import (
	"fmt"
	"os"
	"testing"

	"github.com/metalwire/metalwire/internal/testenv"
)

// enableEnv must be set for the benchmark to run; make bench-data sets it.
const enableEnv = "METALWIRE_SCALE"

var env *testenv.Env

func TestMain(m *testing.M) {
	if os.Getenv(enableEnv) == "" {
		fmt.Printf("data-templating scale benchmark skipped: set %s=1 or run make bench-data\n", enableEnv)
		os.Exit(0)
	}
	testenv.Main(m, &env)
}
