package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/metalwire/metalwire/internal/controller"
	"github.com/metalwire/metalwire/internal/scheme"
	"github.com/metalwire/metalwire/internal/version"
	"github.com/metalwire/metalwire/internal/webhooks"
)

// managerFlags are the settings of `metalwire manager`.
type managerFlags struct {
	kubeconfig              string
	metricsAddr             string
	probeAddr               string
	profilerAddr            string
	leaderElect             bool
	leaderElectionID        string
	leaderElectionNamespace string
	watchNamespace          string
	controllers             []string
	concurrency             int
	ipReuse                 bool
	fabricConcurrency       int
	syncPeriod              time.Duration
	qps                     float32
	burst                   int
	webhookPort             int
	webhookCertDir          string
	zap                     zap.Options
}

func newManagerCommand() *cobra.Command {
	f := &managerFlags{}
	cmd := &cobra.Command{
		Use:   "manager",
		Short: "Run the metalwire controllers against a Kubernetes cluster",
		Long: `Run the metalwire controller manager. It reconciles metalwire's kinds in the cluster that
--kubeconfig (or KUBECONFIG, or the in-cluster service account) points at, serves health checks
and Prometheus metrics, and elects a leader so that several replicas can run safely.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			groups, err := controller.ParseGroups(f.controllers)
			if err != nil {
				return usageError{err}
			}
			return runManager(cmd.Context(), f, groups)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "path to a kubeconfig; default: $KUBECONFIG, then the in-cluster service account")
	fs.StringVar(&f.metricsAddr, "metrics-bind-address", ":8080", `address the Prometheus metrics endpoint listens on; "0" turns it off`)
	fs.StringVar(&f.probeAddr, "health-probe-bind-address", ":9440", "address the /healthz and /readyz endpoints listen on")
	fs.StringVar(&f.profilerAddr, "profiler-address", "", `address a Go pprof endpoint listens on (/debug/pprof/), e.g. "localhost:6060"; off by default`)
	fs.BoolVar(&f.leaderElect, "leader-elect", true, "elect a leader so that only one replica reconciles at a time")
	fs.StringVar(&f.leaderElectionID, "leader-election-id", "metalwire-manager.metalwire.io", "name of the Lease used for leader election")
	fs.StringVar(&f.leaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader election Lease; default: the namespace the manager runs in")
	fs.StringVar(&f.watchNamespace, "namespace", "", "reconcile objects in this namespace only; default: all namespaces")
	fs.StringSliceVar(&f.controllers, "controllers", controller.GroupNames(), "controller groups to run, comma-separated: "+fmt.Sprint(controller.GroupNames()))
	fs.IntVar(&f.concurrency, "concurrency", 10, "objects each controller reconciles at once")
	fs.IntVar(&f.fabricConcurrency, "fabric-concurrency", 4, "switches the fabric controller configures at once (each switch gets one batch at a time)")
	fs.BoolVar(&f.ipReuse, "ip-reuse", false, "name a Metal3Data's IPClaims after its BareMetalHost (<host>-<pool>) so the host keeps its address across re-provisioning (CAPM3's enableBMHNameBasedPreallocation)")
	fs.DurationVar(&f.syncPeriod, "sync-period", 10*time.Minute, "how often every watched object is reconciled again even without a change")
	fs.Float32Var(&f.qps, "kube-api-qps", 50, "queries per second the manager may send to the API server")
	fs.IntVar(&f.burst, "kube-api-burst", 100, "burst of queries the manager may send to the API server")
	fs.IntVar(&f.webhookPort, "webhook-port", 9443, "port the conversion webhooks (CAPM3's v1beta1 <-> v1beta2) listen on; 0 turns them off")
	fs.StringVar(&f.webhookCertDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs/", "directory holding the webhook server's tls.crt and tls.key")
	zapFlags := flag.NewFlagSet("zap", flag.ContinueOnError)
	f.zap.BindFlags(zapFlags)
	fs.AddGoFlagSet(zapFlags)
	return cmd
}

// runManager runs until ctx is cancelled (SIGINT or SIGTERM from main).
func runManager(ctx context.Context, f *managerFlags, groups []controller.Group) error {
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&f.zap)))
	log := ctrl.Log.WithName("manager")

	cfg, err := restConfig(f.kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = f.qps, f.burst

	opts := ctrl.Options{
		Scheme:                  scheme.New(),
		Metrics:                 metricsserver.Options{BindAddress: f.metricsAddr},
		HealthProbeBindAddress:  f.probeAddr,
		PprofBindAddress:        f.profilerAddr,
		LeaderElection:          f.leaderElect,
		LeaderElectionID:        f.leaderElectionID,
		LeaderElectionNamespace: f.leaderElectionNamespace,
		Cache: cache.Options{
			SyncPeriod: &f.syncPeriod,
			// No controller reads managedFields; without them the cache holds about half the
			// bytes, and updates sent from cached objects are smaller (the API server keeps
			// the managedFields a request leaves out).
			DefaultTransform: cache.TransformStripManagedFields(),
		},
	}
	serveWebhooks, why := webhooksServable(f)
	if serveWebhooks {
		opts.WebhookServer = webhook.NewServer(webhook.Options{Port: f.webhookPort, CertDir: f.webhookCertDir})
	}
	if f.watchNamespace != "" {
		opts.Cache.DefaultNamespaces = map[string]cache.Config{f.watchNamespace: {}}
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

	if serveWebhooks {
		if err := webhooks.SetupConversion(mgr); err != nil {
			return err
		}
	} else {
		log.Info("conversion webhooks not served: " + why + "; objects cannot be read or written as CAPM3's v1beta1 until they are")
	}

	added, err := controller.Setup(ctx, mgr, groups, controller.Options{Concurrency: f.concurrency, IPReuse: f.ipReuse, FabricConcurrency: f.fabricConcurrency})
	if err != nil {
		return err
	}
	log.Info("starting", "version", version.Get().Version, "groups", groups, "controllers", added)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running the manager: %w", err)
	}
	return nil
}

// webhooksServable says whether the conversion webhooks can be served: a port, and a
// certificate in the cert dir (in a cluster, cert-manager's Secret mounted there). Outside a
// cluster there is usually none, and the manager runs without them.
func webhooksServable(f *managerFlags) (bool, string) {
	if f.webhookPort == 0 {
		return false, "--webhook-port is 0"
	}
	for _, name := range []string{"tls.crt", "tls.key"} {
		if _, err := os.Stat(filepath.Join(f.webhookCertDir, name)); err != nil {
			return false, fmt.Sprintf("no %s in --webhook-cert-dir %s", name, f.webhookCertDir)
		}
	}
	return true, ""
}

// restConfig loads the kubeconfig the user named, or the default chain.
func restConfig(path string) (*rest.Config, error) {
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
