package manager_test

import (
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/metalwire/metalwire/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	// Until Run sets the manager's logger, envtest's own lines would warn about a missing one.
	ctrl.SetLogger(logr.Discard())
	testenv.Main(m, &env)
}
