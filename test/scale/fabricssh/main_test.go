package fabricssh

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/metalwire/metalwire/internal/testenv"
)

// enableEnv must be set for the benchmark to run; make bench-fabric-ssh sets it.
const enableEnv = "METALWIRE_SCALE"

var env *testenv.Env

func TestMain(m *testing.M) {
	if os.Getenv(enableEnv) == "" {
		fmt.Printf("SSH fabric benchmark skipped: set %s=1 or run make bench-fabric-ssh\n", enableEnv)
		os.Exit(0)
	}
	ctrl.SetLogger(zap.New(zap.Level(zapcore.ErrorLevel)))
	testenv.Main(m, &env)
}
