package fabric

import (
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/metalwire/metalwire/internal/testenv"
)

// enableEnv must be set for the benchmark to run; make bench-fabric sets it.
const enableEnv = "METALWIRE_SCALE"

var env *testenv.Env

func TestMain(m *testing.M) {
	if os.Getenv(enableEnv) == "" {
		fmt.Printf("fabric scale benchmark skipped: set %s=1 or run make bench-fabric\n", enableEnv)
		os.Exit(0)
	}
	// The manager sets its own logger when the benchmark starts it; until then, quiet.
	ctrl.SetLogger(logr.Discard())
	testenv.Main(m, &env)
}
