package v1alpha1_test

import (
	"testing"

	"github.com/metalwire/metalwire/internal/testenv"
)

// env is the API server every test in this package talks to: the rules under test are the CRD
// schema and CEL rules, which only the real API server evaluates.
var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }
