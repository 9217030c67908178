package preprovisioning_test

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/metalwire/metalwire/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	// METALWIRE_TEST_LOG=1 shows the controllers' logs, to debug a failing test.
	if os.Getenv("METALWIRE_TEST_LOG") != "" {
		ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true)))
	} else {
		ctrl.SetLogger(logr.Discard())
	}
	testenv.Main(m, &env)
}
