package manager

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/metalwire/metalwire/internal/controller"
	"github.com/metalwire/metalwire/internal/scheme"
	"github.com/metalwire/metalwire/internal/version"
)

// Run runs the manager until ctx is cancelled (SIGINT or SIGTERM from main).
func Run(ctx context.Context, o *Options, groups []controller.Group) error {
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.Zap)))
	log := ctrl.Log.WithName("manager")

	cfg, err := RestConfig(o.Kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = o.QPS, o.Burst

	opts := ctrl.Options{
		Scheme:                  scheme.New(),
		Metrics:                 metricsserver.Options{BindAddress: o.MetricsAddr},
		HealthProbeBindAddress:  o.ProbeAddr,
		PprofBindAddress:        o.ProfilerAddr,
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        o.LeaderElectionID,
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		Cache: cache.Options{
			SyncPeriod: &o.SyncPeriod,
			// No controller reads managedFields; without them the cache holds about half the
			// bytes, and updates sent from cached objects are smaller (the API server keeps
			// the managedFields a request leaves out).
			DefaultTransform: cache.TransformStripManagedFields(),
		},
	}
	if o.WatchNamespace != "" {
		opts.Cache.DefaultNamespaces = map[string]cache.Config{o.WatchNamespace: {}}
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}

	added, err := controller.Setup(ctx, mgr, groups, controller.Options{Concurrency: o.Concurrency, IPReuse: o.IPReuse})
	if err != nil {
		return err
	}
	log.Info("starting", "version", version.Get().Version, "groups", groups, "controllers", added)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running the manager: %w", err)
	}
	return nil
}

// RestConfig loads the kubeconfig the user named, or the default chain.
func RestConfig(path string) (*rest.Config, error) {
	if path == "" {
		cfg, err := ctrl.GetConfig()
		if err != nil {
			return nil, fmt.Errorf("no cluster to talk to: %w; pass --kubeconfig or set KUBECONFIG", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig %s: %w", path, errors.Unwrap(err))
	}
	return cfg, nil
}
