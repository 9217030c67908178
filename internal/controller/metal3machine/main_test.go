package metal3machine

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/cachepolicy"
	"github.com/metalwire/metalwire/internal/controller/metal3cluster"
	"github.com/metalwire/metalwire/internal/testenv"
)

// env is the management cluster every test in this package shares, with a manager running the
// Metal3Machine and Metal3Cluster reconcilers against it.
var env *testenv.Env

// machines is that manager's Metal3Machine reconciler, reading its cache.
var machines *Reconciler

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
	// Metal3Machines labelled fastTrackLabel belong to the second manager, started with fast
	// track on (startFastTrackManager).
	notFastTrack, err := labels.Parse("!" + fastTrackLabel)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache: cache.Options{
			ByObject:         map[client.Object]cache.ByObject{&infrav1.Metal3Machine{}: {Label: notFastTrack}},
			DefaultTransform: cachepolicy.Transform(), // the image's cache keeps objects so
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The workload clusters of these tests come and go within seconds: retry connecting every
	// second rather than Cluster API's 30.
	clusterCache, err := cachepolicy.NewClusterCache(ctx, mgr, "metal3machine-test", 2)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	clusterCache.(interface{ SetConnectionCreationRetryInterval(time.Duration) }).SetConnectionCreationRetryInterval(time.Second)
	machines = &Reconciler{
		ClusterCache: clusterCache,
		Client:       mgr.GetClient(),
		APIReader:    mgr.GetAPIReader(),
		Recorder:     mgr.GetEventRecorder("metal3machine"),
		NodeRecheck:  300 * time.Millisecond,
		HostRecheck:  5 * time.Second,
	}
	clusters := &metal3cluster.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("metal3cluster")}
	if err := machines.SetupWithManager(ctx, mgr, 4); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := clusters.SetupWithManager(ctx, mgr, 2); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := startFabric(ctx, mgr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	fastTrackDone, err := startFastTrackManager(ctx)
	if err != nil {
		cancel()
		if stopErr := <-done; stopErr != nil {
			fmt.Fprintln(os.Stderr, "manager:", stopErr)
		}
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return testenv.RunWithManagers(m, cancel, done, fastTrackDone)
}

// fastTrackLabel (value "on") on a Metal3Machine hands it to the manager started with fast track.
const fastTrackLabel = "test.metalwire.io/fast-track"

// startFastTrackManager runs a second manager, as `metalwire manager --fast-track` would, with
// only the Metal3Machine reconciler (the first manager's Metal3Cluster reconciler serves both),
// on the Metal3Machines labelled fastTrackLabel=on.
func startFastTrackManager(ctx context.Context) (chan error, error) {
	sel, err := labels.Parse(fastTrackLabel + "=on")
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache: cache.Options{
			ByObject:         map[client.Object]cache.ByObject{&infrav1.Metal3Machine{}: {Label: sel}},
			DefaultTransform: cachepolicy.Transform(),
		},
		// The first manager runs controllers of the same names in this process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, err
	}
	clusterCache, err := cachepolicy.NewClusterCache(ctx, mgr, "metal3machine-fast-track-test", 2)
	if err != nil {
		return nil, err
	}
	machines := &Reconciler{
		ClusterCache: clusterCache,
		Client:       mgr.GetClient(),
		APIReader:    mgr.GetAPIReader(),
		Recorder:     mgr.GetEventRecorder("metal3machine"),
		FastTrack:    true,
		NodeRecheck:  300 * time.Millisecond,
		HostRecheck:  5 * time.Second,
	}
	if err := machines.SetupWithManager(ctx, mgr, 2); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return done, nil
}
