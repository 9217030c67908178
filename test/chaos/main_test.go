package chaos

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/metalwire/metalwire/internal/testenv"
)

// settings are the sizes of a run: small by default (make test), large under make chaos.
var settings = struct {
	// machines is how many machines' data each scenario renders (CHAOS_N).
	machines int
	// kills is how many times the manager is killed in TestManagerKilled (CHAOS_KILLS).
	kills int
	// seed makes the kill moments reproducible (CHAOS_SEED; printed at the start).
	seed uint64
}{machines: 100, kills: 1}

// managerBinary is cmd/manager, built once for the run: the binary the image ships.
var managerBinary string

func TestMain(m *testing.M) {
	var err error
	if settings.machines, err = positive("CHAOS_N", settings.machines); err == nil {
		settings.kills, err = positive("CHAOS_KILLS", settings.kills)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	settings.seed = uint64(time.Now().UnixNano())
	if s := os.Getenv("CHAOS_SEED"); s != "" {
		if settings.seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			fmt.Fprintf(os.Stderr, "CHAOS_SEED: %q is not a number\n", s)
			os.Exit(2)
		}
	}
	// envtest logs through controller-runtime; the figures are what this package prints.
	ctrl.SetLogger(logr.Discard())
	if _, err := testenv.CheckControlPlane(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "metalwire-chaos-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		if err := buildManager(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("chaos: %d machines per scenario, %d kills, seed %d (CHAOS_N, CHAOS_KILLS, CHAOS_SEED)\n",
			settings.machines, settings.kills, settings.seed)
		return m.Run()
	}()
	os.Exit(code)
}

// buildManager builds cmd/manager into dir.
func buildManager(dir string) error {
	root, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	managerBinary = filepath.Join(dir, "manager")
	build := exec.Command("go", "build", "-o", managerBinary, "./cmd/manager")
	build.Dir = root
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building cmd/manager: %w", err)
	}
	return nil
}

func positive(name string, def int) (int, error) {
	s := os.Getenv(name)
	if s == "" {
		return def, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%s: %q is not a positive number", name, s)
	}
	return v, nil
}

// newRand is the scenario's source of random moments, from the run's seed and the test's name.
func newRand(t *testing.T) *rand.Rand {
	var h uint64
	for _, c := range t.Name() {
		h = h*31 + uint64(c)
	}
	return rand.New(rand.NewPCG(settings.seed, h))
}
