// Package managertest runs, in tests, the manager the image runs: built by manager.New with the
// image's defaults, against a test API server. It is for tests only; the image never links it.
package managertest

import (
	"context"
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
	ctx, cancel := context.WithCancel(context.Background())
	m, err := manager.New(ctx, o, groups)
	if err != nil {
		cancel()
		t.Fatalf("building the manager: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		testenv.ReportManagerExit(t, m.Start(ctx))
	}()
	t.Cleanup(func() { cancel(); <-done })
	return m
}
