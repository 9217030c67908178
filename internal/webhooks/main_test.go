package webhooks_test

import (
	"testing"

	"github.com/metalwire/metalwire/internal/testenv"
)

// env is an API server whose CRDs convert through the conversion webhooks SetupConversion
// registers, served for the whole package.
var env *testenv.Env

func TestMain(m *testing.M) { testenv.MainWith(m, &env, testenv.Options{ServeConversion: true}) }
