// Package managertest runs, in tests, the manager the image runs: built by manager.New with the
// image's defaults, against a test API server. It is for tests only; the image never links it.
package managertest

import (
	"context"
	"sync"
	"testing"

	"github.com/metalwire/metalwire/internal/controller"
	"github.com/metalwire/metalwire/internal/manager"
	"github.com/metalwire/metalwire/internal/testenv"
)

// Start runs the manager the image runs (manager.New, with the image's defaults) against the
// test API server until the test ends: leader election, metrics, health probes and webhooks off,
// its cache limited to namespace ns ("" for every namespace). tune changes its options before it
// is built (switch drivers, shorter retries).
func Start(t testing.TB, e *testenv.Env, ns string, groups []controller.Group, tune ...func(*manager.Options)) *manager.Manager {
	t.Helper()
	m := New(t, e, ns, groups, tune...)
	Run(t, m)
	return m
}

// New builds the manager Start runs without starting it, for a test that adds a reconciler of
// its own, set up as the test needs (a shorter interval, a stand-in workload cluster), beside
// groups (often none); Run starts it.
func New(t testing.TB, e *testenv.Env, ns string, groups []controller.Group, tune ...func(*manager.Options)) *manager.Manager {
	t.Helper()
	// What the controllers' setup starts with this context ends with the test, after the
	// manager (Run's cleanup runs first).
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	m, err := Build(ctx, e, ns, groups, tune...)
	if err != nil {
		t.Fatalf("building the manager: %v", err)
	}
	return m
}

// Build is New for a TestMain, where no testing.TB is at hand: one manager for the package's
// tests, which the caller starts (testenv.RunWithManagers) and stops by ending ctx.
func Build(ctx context.Context, e *testenv.Env, ns string, groups []controller.Group, tune ...func(*manager.Options)) (*manager.Manager, error) {
	o := manager.NewOptions()
	o.RestConfig, o.Scheme = e.Config, e.Scheme
	o.MetricsAddr, o.ProbeAddr, o.WebhookPort = "0", "0", 0
	o.LeaderElect = false
	o.WatchNamespace = ns
	o.SkipNameValidation = true
	o.Concurrency, o.FabricConcurrency = 2, 2
	for _, f := range tune {
		f(o)
	}
	if groups == nil {
		groups = []controller.Group{}
	}
	return manager.New(ctx, o, groups)
}

// Run starts m until the test ends, or until stop (a test that restarts its controllers); a
// manager that ends with an error fails the test.
func Run(t testing.TB, m *manager.Manager) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		testenv.ReportManagerExit(t, m.Start(ctx))
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}
