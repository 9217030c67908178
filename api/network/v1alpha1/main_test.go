package v1alpha1_test

import (
	"testing"

	"github.com/metalwire/metalwire/internal/testenv"
)

// env is the API server: the rules under test are the CRD schema and CEL rules.
var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }
