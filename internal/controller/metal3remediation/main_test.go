package metal3remediation

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/core/reconcilers/machinehealthcheck"
	"sigs.k8s.io/cluster-api/core/setup"
	"sigs.k8s.io/cluster-api/util/index"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
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
	// Two managers, as two deployments with different --remediation-node-mode: the one that
	// deletes Nodes (and runs the MachineHealthCheck) takes every remediation without the
	// nodeModeLabel, the one that taints Nodes those labelled taint.
	deleting, err := startManager(ctx, NodeModeDelete, "!"+nodeModeLabel)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tainting, err := startManager(ctx, NodeModeTaint, nodeModeLabel+"="+string(NodeModeTaint))
	if err != nil {
		cancel()
		if stopErr := <-deleting; stopErr != nil {
			fmt.Fprintln(os.Stderr, "manager:", stopErr)
		}
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return testenv.RunWithManagers(m, cancel, deleting, tainting)
}

// nodeModeLabel on a Metal3Remediation picks the test manager that reconciles it.
const nodeModeLabel = "test.metalwire.io/node-mode"

// startManager runs a remediation reconciler with the given node mode on the remediations its
// label selector matches; the delete-mode one runs Cluster API's MachineHealthCheck too.
func startManager(ctx context.Context, mode NodeMode, selector string) (chan error, error) {
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{ByObject: map[client.Object]cache.ByObject{&infrav1.Metal3Remediation{}: {Label: sel}}},
		// Both managers run a controller named metal3remediation in this one process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, err
	}
	r := &Reconciler{
		Client: mgr.GetClient(),
		WorkloadClient: func(context.Context, client.ObjectKey) (client.Client, error) {
			return env.Client, nil
		},
		NodeMode: mode,
		Recheck:  200 * time.Millisecond,
		Now:      clock.Now,
	}
	if err := r.SetupWithManager(ctx, mgr, 2); err != nil {
		return nil, err
	}
	if mode == NodeModeDelete {
		if err := setupMachineHealthCheck(ctx, mgr); err != nil {
			return nil, err
		}
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return done, nil
}
