package measure

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

// EnableEnv must be set for a benchmark package's tests to run; the make bench-* targets set it.
const EnableEnv = "METALWIRE_SCALE"

// Main is a benchmark package's TestMain: it skips the package unless EnableEnv is set (naming
// target, the make target that runs it), checks the test control plane is there, and, when
// binary is not nil, first builds cmd/manager (the image's manager) from this checkout into a
// temporary directory and sets *binary to it, so the manager measured is the one a user runs: the
// same code as `metalwire manager`, without the CLI's dev mode and Cluster API controllers, whose
// pages would count in its resident memory.
func Main(m *testing.M, target string, binary *string) {
	if os.Getenv(EnableEnv) == "" {
		fmt.Printf("benchmark skipped: set %s=1 or run make %s\n", EnableEnv, target)
		os.Exit(0)
	}
	if _, err := cacheChecks(os.Getenv(CacheChecksEnv)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// The benchmark's own informers would otherwise complain that no logger is set.
	ctrl.SetLogger(logr.Discard())
	if _, err := testenv.CheckControlPlane(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dir := ""
	if binary != nil {
		var err error
		if dir, err = os.MkdirTemp("", "metalwire-"+target+"-"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if *binary, err = buildManager(dir); err != nil {
			fmt.Fprintln(os.Stderr, "building the manager:", err)
			_ = os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	if dir != "" {
		_ = os.RemoveAll(dir)
	}
	os.Exit(code)
}

// buildManager builds cmd/manager of the module this runs in into dir.
func buildManager(dir string) (string, error) {
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", fmt.Errorf("finding the module root: %w", err)
	}
	out := filepath.Join(dir, "manager")
	build := exec.Command("go", "build", "-o", out, "./cmd/manager")
	build.Dir = strings.TrimSpace(string(root))
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	return out, build.Run()
}

// OnFreshServer runs f against an API server and etcd started for it, after warm has written to
// it: a fresh API server answers its first few hundred writes slowly (connections, caches and heap
// still growing), and one already holding other runs' objects is slower, so every measured run
// gets its own warmed-up server.
//
// The server answers CAPM3's v1beta1 as a deployed one does: its conversion webhook runs (in this
// process, for the floor and the manager's runs alike). The API server keeps a watch cache for
// each version a CRD serves, and the one of v1beta1 converts every write of a CAPM3 kind
// through the webhook (kubernetes/kubernetes#129979). Without the webhook that cache fails,
// and lists every object from etcd again each time its retry comes round: a cost that grows
// with the objects times the run's length, which no deployment has.
func OnFreshServer(t *testing.T, warm func(e *testenv.Env) error, f func(e *testenv.Env)) {
	t.Helper()
	opts := testenv.Options{ServeConversion: true}
	if !CacheChecks() {
		opts.FeatureGates = "DetectCacheInconsistency=false"
	}
	e, err := testenv.StartWith(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := e.Stop(); err != nil {
			t.Errorf("stopping the API server: %v", err)
		}
	}()
	if err := warm(e); err != nil {
		t.Fatalf("warming the API server up: %v", err)
	}
	f(e)
}

// CacheChecksEnv turns the API server's cache consistency checker on for a benchmark's runs,
// floor and manager alike, when "on".
const CacheChecksEnv = "BENCH_CACHE_CHECKS"

// CacheChecks reports whether the benchmark's API servers run Kubernetes' cache consistency
// checker, as a deployed API server does since 1.34 (DetectCacheInconsistency): every 5 to 7.5
// minutes, for each resource, it lists every object from etcd (through the conversion webhook for
// a CAPM3 kind's v1beta1) and compares them with the watch cache. It costs by the minute and by
// the objects stored, not by the write, and when it comes depends on the API server's age: a
// floor shorter than five minutes on a fresh server never meets it, while the manager's run on
// another fresh server, which lives longer by the manager's start-up and the run's own length,
// meets a whole round of it (34 checks at 5,000 machines). A ratio to the floor would charge the
// manager a cost neither causes, so the benchmarks run without it unless CacheChecksEnv=on,
// which runs it for floor and runs alike.
func CacheChecks() bool {
	on, _ := cacheChecks(os.Getenv(CacheChecksEnv))
	return on
}

// cacheChecks reads CacheChecksEnv's value: "on", or "off" or unset. Any other value is refused
// (Main stops the benchmark on it) rather than read as off: the checker ran by default until
// 2026-11-27, and a "1" or "true" meant to keep it must not drop it unsaid.
func cacheChecks(v string) (bool, error) {
	switch v {
	case "on":
		return true, nil
	case "", "off":
		return false, nil
	}
	return false, fmt.Errorf("%s=%q: say on (the API server's cache consistency checker runs, for floors and runs alike) or off (the default)", CacheChecksEnv, v)
}

// DescribeCacheChecks is a line for a benchmark's header saying whether the checker runs.
func DescribeCacheChecks() string {
	if CacheChecks() {
		return "the API server's cache consistency checker runs (" + CacheChecksEnv + "=on), as in a deployment, for floor and runs alike: it comes by the API server's age, every 5 to 7.5 minutes a resource, so a run that lives longer than its floor meets more of it"
	}
	return "the API server's cache consistency checker is off for floor and runs alike: it comes by the API server's age, not by the write, and would fall in a run but not in a floor shorter than five minutes (" + CacheChecksEnv + "=on runs it)"
}
