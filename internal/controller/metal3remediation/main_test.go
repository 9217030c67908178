package metal3remediation

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/core/reconcilers/machinehealthcheck"
	"sigs.k8s.io/cluster-api/core/setup"
	"sigs.k8s.io/cluster-api/util/index"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
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

// setupMachineHealthCheck runs Cluster API's own MachineHealthCheck controller, as its manager
// (and dev mode) configures it, so that tests see it create Metal3Remediations.
func setupMachineHealthCheck(ctx context.Context, mgr ctrl.Manager) error {
	if err := index.AddDefaultIndexes(ctx, mgr); err != nil {
		return err
	}
	opts := controller.Options{MaxConcurrentReconciles: 2}
	clusterCache, err := clustercache.SetupWithManager(ctx, mgr, clustercache.Options{
		SecretClient: mgr.GetClient(),
		Cache:        setup.ClusterCacheCacheOptions(),
		Client:       setup.ClusterCacheClientOptions("metal3remediation-test", 20, 30),
	}, opts)
	if err != nil {
		return err
	}
	return (&machinehealthcheck.Reconciler{Client: mgr.GetClient(), ClusterCache: clusterCache}).SetupWithManager(ctx, mgr, opts)
}

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
	if err := setupMachineHealthCheck(ctx, mgr); err != nil {
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
