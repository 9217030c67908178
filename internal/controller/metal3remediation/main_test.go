package metal3remediation

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/metalwire/metalwire/internal/testenv"
)

// env is the management cluster the tests share; it is also every Cluster's workload cluster
// (Nodes are cluster-scoped, each test names its own).
var env *testenv.Env

// clock is the reconciler's time: tests move it on instead of waiting timeoutSeconds.
var clock = &fakeClock{}

type fakeClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	started, err := testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	env = started
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the test environment:", err)
		}
	}()
	if os.Getenv("TEST_VERBOSE_LOGS") != "" {
		ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	r := &Reconciler{
		Client: mgr.GetClient(),
		WorkloadClient: func(context.Context, client.ObjectKey) (client.Client, error) {
			return env.Client, nil
		},
		Recheck: 200 * time.Millisecond,
		Now:     clock.Now,
	}
	if err := r.SetupWithManager(ctx, mgr, 2); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	code := m.Run()
	cancel()
	if err := <-done; err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}
