package manager

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/metalwire/metalwire/internal/controller"
	"github.com/metalwire/metalwire/internal/controller/cachepolicy"
	"github.com/metalwire/metalwire/internal/scheme"
	"github.com/metalwire/metalwire/internal/switchdriver"
	"github.com/metalwire/metalwire/internal/webhooks"
)

// Embedding holds what a program that runs the manager inside itself (dev mode, a test) sets
// beyond the command line. The zero value is the image's manager.
type Embedding struct {
	// RestConfig is the API server to talk to; nil loads --kubeconfig (or the default chain).
	RestConfig *rest.Config
	// Scheme is the manager's scheme; nil is metalwire's (internal/scheme).
	Scheme *runtime.Scheme
	// Logger is the manager's logger; unset is klog's, as the image logs.
	Logger logr.Logger
	// SwitchDrivers are the switch drivers the fabric controllers use; nil is the drivers the
	// image ships (switchdriver.Default).
	SwitchDrivers *switchdriver.Registry
	// MoreNamespaces are namespaces the cache watches besides --namespace, when that is set: for
	// a test whose objects span two namespaces.
	MoreNamespaces []string
	// SkipNameValidation lets one process build several managers with the same controllers
	// (tests, dev mode started twice).
	SkipNameValidation bool
	// WebhookHost is the address the webhook server binds (with --webhook-port and
	// --webhook-cert-dir); "" is every address.
	WebhookHost string
	// ClusterCacheName names the ClusterCache that reaches workload clusters; unset is
	// "metalwire-manager".
	ClusterCacheName string
	// SwitchRetryMin, SwitchRetryMax and VLANRetry shorten the fabric controllers' waits
	// (controller.Options); zero keeps their defaults.
	SwitchRetryMin, SwitchRetryMax, VLANRetry time.Duration
	// HostReportInterval shortens how often hosts that have not reported their network
	// configured are asked again (controller.Options); zero keeps the default.
	HostReportInterval time.Duration
}

// Manager is the controller manager with metalwire's controllers set up, not started yet.
type Manager struct {
	ctrl.Manager
	// ClusterCache reaches workload clusters; nil when nothing needs it.
	ClusterCache clustercache.ClusterCache
	// RenderedSecrets holds the metadata of the Secrets a Metal3Data renders, which the
	// manager's cache does not hold (cachepolicy.NewRenderedSecrets); read it only with
	// cachepolicy.RenderedSecret().
	RenderedSecrets cache.Cache
	// Controllers names the controllers set up.
	Controllers []string

	informers *informerRecorder
}

// Informers lists the kinds whose informers the manager's cache has started, as
// group/version/kind strings: those made ready before /readyz answers, and any a controller
// asked for later (a kind missing from controller.Informers).
func (m *Manager) Informers() []string { return m.informers.kinds() }

// NewOptions returns the options the image's manager runs with when given no flags.
func NewOptions() *Options {
	o := &Options{}
	fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
	o.AddFlags(fs)
	_ = fs.Parse(nil)
	return o
}

// New builds the manager that the image, `metalwire manager`, dev mode and the tests that run
// controllers all run: the cache options, informers, indexes, controllers of groups and switch
// drivers, health checks and webhooks. Nothing is started; Start runs it until ctx ends.
func New(ctx context.Context, o *Options, groups []controller.Group) (*Manager, error) {
	log := o.Logger
	if log.GetSink() == nil {
		log = klog.Background()
	}
	ctx = ctrl.LoggerInto(ctx, log)
	if o.LeaderElect && (o.RetryPeriod >= o.RenewDeadline || o.RenewDeadline >= o.LeaseDuration) {
		return nil, fmt.Errorf("leader election needs --leader-elect-retry-period (%s) < --leader-elect-renew-deadline (%s) < --leader-elect-lease-duration (%s)",
			o.RetryPeriod, o.RenewDeadline, o.LeaseDuration)
	}
	cfg := o.RestConfig
	if cfg == nil {
		var err error
		if cfg, err = RestConfig(o.Kubeconfig); err != nil {
			return nil, err
		}
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = o.QPS, o.Burst

	electionNamespace := o.LeaderElectionNamespace
	if o.LeaderElect && electionNamespace == "" && !inCluster() {
		electionNamespace = kubeconfigNamespace(o.Kubeconfig)
		log.WithName("manager").Info("not running in a cluster: the leader election Lease goes to namespace "+electionNamespace+"; set --leader-election-namespace to choose another, or --leader-elect=false",
			"lease", electionNamespace+"/"+o.LeaderElectionID)
	}
	s := o.Scheme
	if s == nil {
		s = scheme.New()
	}
	metrics := metricsserver.Options{BindAddress: o.MetricsAddr}
	if !o.InsecureDiagnostics {
		metrics.SecureServing = true
		metrics.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	recorder := &informerRecorder{scheme: s, seen: map[string]bool{}}
	cacheOpts := cache.Options{
		SyncPeriod:       &o.SyncPeriod,
		ByObject:         cachepolicy.ByObject(),
		DefaultTransform: cachepolicy.Transform(),
	}
	if o.WatchNamespace != "" {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{o.WatchNamespace: {}}
		for _, ns := range o.MoreNamespaces {
			cacheOpts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	opts := ctrl.Options{
		Scheme:                  s,
		Logger:                  log,
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
		Cache:                         cacheOpts,
		MapperProvider:                newRememberingMapper,
		NewCache: func(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
			c, err := cache.New(cfg, opts)
			recorder.Cache = c
			return recorder, err
		},
		Controller: config.Controller{SkipNameValidation: ptr.To(o.SkipNameValidation)},
	}
	if o.SetupWebhooks == nil && o.WebhookPort != 0 {
		// The conversion webhooks need the certificate cert-manager (or dev mode) provides;
		// without one the manager still runs, for v1beta2 clients only.
		if certsIn(o.WebhookCertDir) {
			o.SetupWebhooks = webhooks.SetupConversion
		} else {
			log.WithName("manager").Info("conversion webhooks not served: no tls.crt and tls.key in --webhook-cert-dir; objects cannot be read or written as CAPM3's v1beta1 until they are", "dir", o.WebhookCertDir)
		}
	}
	if o.SetupWebhooks != nil {
		opts.WebhookServer = webhook.NewServer(webhook.Options{Host: o.WebhookHost, Port: o.WebhookPort, CertDir: o.WebhookCertDir})
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	m := &Manager{Manager: mgr, informers: recorder}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if o.SetupWebhooks != nil {
		if err := o.SetupWebhooks(mgr); err != nil {
			return nil, fmt.Errorf("setting up the webhooks: %w", err)
		}
		if err := mgr.AddReadyzCheck("webhooks", mgr.GetWebhookServer().StartedChecker()); err != nil {
			return nil, err
		}
	}

	// The rendered Secrets' metadata-only cache: an informer is made in it only when a
	// controller (the Metal3Data controller, dev mode's host simulator) reads or watches them.
	if m.RenderedSecrets, err = cachepolicy.NewRenderedSecrets(mgr, cacheOpts); err != nil {
		return nil, err
	}

	copts := controller.Options{
		RenderedSecrets: m.RenderedSecrets,
		Concurrency:     o.Concurrency, IPReuse: o.IPReuse, FabricConcurrency: o.FabricConcurrency,
		ControllerConcurrency: o.ControllerConcurrency(), WatchFilter: o.WatchFilter, FastTrack: o.FastTrack,
		RemediationNodeMode: o.RemediationNodeMode, SwitchDrivers: o.SwitchDrivers,
		SwitchRetryMin: o.SwitchRetryMin, SwitchRetryMax: o.SwitchRetryMax, VLANRetry: o.VLANRetry,
		HostReportInterval: o.HostReportInterval,
		// A switch read and left in line is read again at the latest by the resync after next.
		SwitchReadAgainAfter: o.SyncPeriod / 2,
	}
	if slices.Contains(groups, controller.Infrastructure) {
		// Workload clusters (their Nodes) are reached through Cluster API's ClusterCache.
		if m.ClusterCache, err = cachepolicy.NewClusterCache(ctx, mgr, cmp.Or(o.ClusterCacheName, "metalwire-manager"), o.Concurrency); err != nil {
			return nil, err
		}
		copts.ClusterCache = m.ClusterCache
	}
	if m.Controllers, err = controller.Setup(ctx, mgr, groups, copts); err != nil {
		return nil, err
	}
	// Every informer the controllers read is made now, so the caches list them all before the
	// controllers start and /readyz waits for them: made lazily, by a controller's first watch
	// or read, they would not exist yet when the cache first reports itself synced.
	for _, obj := range controller.Informers(groups) {
		if _, err := mgr.GetCache().GetInformer(ctx, obj, cache.BlockUntilSynced(false)); err != nil {
			return nil, fmt.Errorf("informer for %T: %w", obj, err)
		}
	}
	if err := mgr.AddReadyzCheck("informers", cacheSynced(mgr.GetCache())); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("rendered-secrets", cacheSynced(m.RenderedSecrets)); err != nil {
		return nil, err
	}
	return m, nil
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

// informerRecorder is the manager's cache, noting the kind of every informer asked of it.
type informerRecorder struct {
	cache.Cache
	scheme *runtime.Scheme

	mu   sync.Mutex
	seen map[string]bool
}

func (r *informerRecorder) note(obj runtime.Object) {
	gvk, err := clientGVK(r.scheme, obj)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[gvk] = true
}

func (r *informerRecorder) kinds() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.seen))
	for k := range r.seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// GetInformer implements cache.Cache.
func (r *informerRecorder) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	r.note(obj)
	return r.Cache.GetInformer(ctx, obj, opts...)
}

// Get implements client.Reader: a read through the cache makes an informer of its kind.
func (r *informerRecorder) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.note(obj)
	return r.Cache.Get(ctx, key, obj, opts...)
}

// List implements client.Reader.
func (r *informerRecorder) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	r.note(list)
	return r.Cache.List(ctx, list, opts...)
}

// clientGVK names the kind of an object or of a list's items.
func clientGVK(s *runtime.Scheme, obj runtime.Object) (string, error) {
	gvk, err := apiutil.GVKForObject(obj, s)
	if err != nil {
		return "", err
	}
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	return gvk.String(), nil
}
