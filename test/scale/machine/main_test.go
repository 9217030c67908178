package machine

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/metalwire/metalwire/internal/testenv"
)

// enableEnv must be set for the benchmark to run; make bench-machine sets it.
const enableEnv = "METALWIRE_SCALE"

// managerBinary is the metalwire binary built from this checkout for the run.
var managerBinary string

func TestMain(m *testing.M) {
	if os.Getenv(enableEnv) == "" {
		fmt.Printf("machine association benchmark skipped: set %s=1 or run make bench-machine\n", enableEnv)
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "metalwire-bench-machine-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	managerBinary = filepath.Join(dir, "metalwire")
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "finding the module root:", err)
		os.Exit(1)
	}
	build := exec.Command("go", "build", "-o", managerBinary, "./cmd/metalwire")
	build.Dir = strings.TrimSpace(string(root))
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the manager:", err)
		os.Exit(1)
	}
	ctrl.SetLogger(logr.Discard())
	if _, err := testenv.CheckControlPlane(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
