package ippool_test

import (
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/metalwire/metalwire/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	// The controllers log every retried conflict; the assertions say what went wrong.
	ctrl.SetLogger(logr.Discard())
	testenv.Main(m, &env)
}
