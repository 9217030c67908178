package machine

import (
	"testing"

	"github.com/metalwire/metalwire/test/scale/measure"
)

// managerBinary is the image's manager, cmd/manager, built from this checkout for the run.
var managerBinary string

func TestMain(m *testing.M) { measure.Main(m, "bench-machine", &managerBinary) }
