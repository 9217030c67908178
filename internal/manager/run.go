package manager

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	logsv1 "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/metalwire/metalwire/internal/controller"
	"github.com/metalwire/metalwire/internal/scheme"
	"github.com/metalwire/metalwire/internal/version"
	"github.com/metalwire/metalwire/internal/webhooks"
)

// serviceAccountNamespace is where a Pod finds its namespace; its absence means the manager
// runs outside a cluster.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Logging is process-wide: component-base refuses to apply a second configuration, so the first
// Run of a process applies it and later ones (tests, a restarted manager) keep it.
var (
	loggingOnce sync.Once
	loggingErr  error
)

func applyLogging(c *logsv1.LoggingConfiguration) error {
	loggingOnce.Do(func() { loggingErr = logsv1.ValidateAndApply(c, nil) })
	return loggingErr
}

// Run runs the manager until ctx is cancelled (SIGINT or SIGTERM from main).
func Run(ctx context.Context, o *Options, groups []controller.Group) error {
	if err := applyLogging(o.Logs); err != nil {
		return fmt.Errorf("logging flags: %w", err)
	}
	// controller-runtime logs through klog, so its lines and client-go's share one format.
	ctrl.SetLogger(klog.Background())
	log := ctrl.Log.WithName("manager")

	if o.LeaderElect && (o.RetryPeriod >= o.RenewDeadline || o.RenewDeadline >= o.LeaseDuration) {
		return fmt.Errorf("leader election needs --leader-elect-retry-period (%s) < --leader-elect-renew-deadline (%s) < --leader-elect-lease-duration (%s)",
			o.RetryPeriod, o.RenewDeadline, o.LeaseDuration)
	}
	cfg, err := RestConfig(o.Kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = o.QPS, o.Burst

	electionNamespace := o.LeaderElectionNamespace
	if o.LeaderElect && electionNamespace == "" && !inCluster() {
		electionNamespace = kubeconfigNamespace(o.Kubeconfig)
		log.Info("not running in a cluster: the leader election Lease goes to namespace "+electionNamespace+"; set --leader-election-namespace to choose another, or --leader-elect=false",
			"lease", electionNamespace+"/"+o.LeaderElectionID)
	}

	metrics := metricsserver.Options{BindAddress: o.MetricsAddr}
	if !o.InsecureDiagnostics {
		metrics.SecureServing = true
		metrics.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	opts := ctrl.Options{
		Scheme:                  scheme.New(),
		Metrics:                 metrics,
		HealthProbeBindAddress:  o.ProbeAddr,
		PprofBindAddress:        o.ProfilerAddr,
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        o.LeaderElectionID,
		LeaderElectionNamespace: electionNamespace,
		LeaseDuration:           &o.LeaseDuration,
		RenewDeadline:           &o.RenewDeadline,
		RetryPeriod:             &o.RetryPeriod,
		// Give up the lease on the way out, so a new replica takes over at once.
		LeaderElectionReleaseOnCancel: true,
		GracefulShutdownTimeout:       &o.GracefulShutdown,
		Cache: cache.Options{
			SyncPeriod: &o.SyncPeriod,
			// No controller reads managedFields; without them the cache holds about half the
			// bytes, and updates sent from cached objects are smaller (the API server keeps
			// the managedFields a request leaves out).
			DefaultTransform: cache.TransformStripManagedFields(),
			ByObject:         controller.CacheByObject(),
		},
	}
	if o.SetupWebhooks == nil && o.WebhookPort != 0 {
		// The conversion webhooks need the certificate cert-manager (or dev mode) provides;
		// without one the manager still runs, for v1beta2 clients only.
		if certsIn(o.WebhookCertDir) {
			o.SetupWebhooks = webhooks.SetupConversion
		} else {
			log.Info("conversion webhooks not served: no tls.crt and tls.key in --webhook-cert-dir; objects cannot be read or written as CAPM3's v1beta1 until they are", "dir", o.WebhookCertDir)
		}
	}
	if o.SetupWebhooks != nil {
		opts.WebhookServer = webhook.NewServer(webhook.Options{Port: o.WebhookPort, CertDir: o.WebhookCertDir})
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
	if err := mgr.AddReadyzCheck("informers", cacheSynced(mgr.GetCache())); err != nil {
		return err
	}
	if o.SetupWebhooks != nil {
		if err := o.SetupWebhooks(mgr); err != nil {
			return fmt.Errorf("setting up the webhooks: %w", err)
		}
		if err := mgr.AddReadyzCheck("webhooks", mgr.GetWebhookServer().StartedChecker()); err != nil {
			return err
		}
	}

	copts := controller.Options{
		Concurrency: o.Concurrency, IPReuse: o.IPReuse, FabricConcurrency: o.FabricConcurrency,
		ControllerConcurrency: o.ControllerConcurrency(), WatchFilter: o.WatchFilter, FastTrack: o.FastTrack,
		RemediationNodeMode: o.RemediationNodeMode,
	}
	if slices.Contains(groups, controller.Infrastructure) {
		// Workload clusters (their Nodes) are reached through Cluster API's ClusterCache.
		if copts.ClusterCache, err = controller.NewClusterCache(ctx, mgr, "metalwire-manager", o.Concurrency); err != nil {
			return err
		}
	}
	added, err := controller.Setup(ctx, mgr, groups, copts)
	if err != nil {
		return err
	}
	log.Info("starting", "version", version.Get().Version, "groups", groups, "controllers", added)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running the manager: %w", err)
	}
	return nil
}

// cacheSynced is ready once every informer the controllers use has listed its kind: before
// that a reconcile would see an empty world.
func cacheSynced(c cache.Cache) healthz.Checker {
	return func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), time.Second)
		defer cancel()
		if !c.WaitForCacheSync(ctx) {
			return errors.New("the informer caches have not synced yet")
		}
		return nil
	}
}

func inCluster() bool {
	_, err := os.Stat(serviceAccountNamespace)
	return err == nil
}

// kubeconfigNamespace is the namespace of the kubeconfig's current context, or "default".
func kubeconfigNamespace(path string) string {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	ns, _, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).Namespace()
	if err != nil || ns == "" {
		return "default"
	}
	return ns
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

// certsIn says whether dir holds a serving certificate and key.
func certsIn(dir string) bool {
	for _, f := range []string{"tls.crt", "tls.key"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return false
		}
	}
	return true
}
