package fabric

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

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
	// Errors only: a line per configured switch would bury the figures.
	ctrl.SetLogger(zap.New(zap.Level(zapcore.ErrorLevel)))
	testenv.Main(m, &env)
}
