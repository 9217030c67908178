package manager

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/component-base/logs"
	logsv1 "k8s.io/component-base/logs/api/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/metalwire/metalwire/internal/controller"
	"github.com/metalwire/metalwire/internal/controller/metal3remediation"
	"github.com/metalwire/metalwire/internal/controller/networkdevice"

	// Registers --logging-format=json.
	_ "k8s.io/component-base/logs/json/register"
)

// Options are the settings of the manager, bound to command-line flags by AddFlags.
type Options struct {
	Kubeconfig              string
	MetricsAddr             string
	InsecureDiagnostics     bool
	ProbeAddr               string
	ProfilerAddr            string
	LeaderElect             bool
	LeaderElectionID        string
	LeaderElectionNamespace string
	LeaseDuration           time.Duration
	RenewDeadline           time.Duration
	RetryPeriod             time.Duration
	WatchNamespace          string
	Controllers             []string
	Concurrency             int
	IPReuse                 bool
	FabricConcurrency       int
	SyncPeriod              time.Duration
	GracefulShutdown        time.Duration
	QPS                     float32
	Burst                   int
	WebhookPort             int
	WebhookCertDir          string
	// CAPM3's flags: --watch-filter, --fast-track (CAPM3_FAST_TRACK),
	// --<controller>-concurrency; see capm3Flags.
	WatchFilter         string
	FastTrack           bool
	controllerFlagValue map[string]*int
	// RemediationNodeMode is --remediation-node-mode (addRemediationFlags).
	RemediationNodeMode metal3remediation.NodeMode
	// Logs are Cluster API's logging flags (--v, --logging-format, ...), from component-base.
	Logs *logsv1.LoggingConfiguration

	// Embedding is what a program running the manager inside itself sets (dev mode, tests).
	Embedding

	// SetupWebhooks registers webhooks (conversion, defaulting, validation) with the manager's
	// webhook server. With it nil no webhook server runs and --webhook-* are ignored.
	SetupWebhooks func(mgr ctrl.Manager) error
}

// AddFlags binds every option to a flag of fs, with its default.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "path to a kubeconfig; default: $KUBECONFIG, then the in-cluster service account")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", ":8443", `address the Prometheus metrics endpoint listens on (HTTPS, clients authenticated and authorised by the API server); "0" turns it off`)
	fs.BoolVar(&o.InsecureDiagnostics, "insecure-diagnostics", false, "serve the metrics endpoint over plain HTTP with no authentication or authorisation")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":9440", "address the /healthz and /readyz endpoints listen on")
	fs.StringVar(&o.ProfilerAddr, "profiler-address", "", `address a Go pprof endpoint listens on (/debug/pprof/), e.g. "localhost:6060"; off by default`)
	fs.BoolVar(&o.LeaderElect, "leader-elect", true, "elect a leader so that only one replica reconciles at a time")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", "metalwire-manager.metalwire.io", "name of the Lease used for leader election")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader election Lease; default: the namespace the manager runs in, or outside a cluster the kubeconfig context's namespace (else default)")
	// Cluster API's flag names and client-go's defaults.
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", 15*time.Second, "how long a replica waits after the leader's last renewal before it takes the lease over; a killed leader's work stops for about this long")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second, "how long the leader keeps trying to renew the lease before it stops leading (and exits); below --leader-elect-lease-duration")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", 2*time.Second, "how often replicas try to acquire or renew the lease")
	fs.StringVar(&o.WatchNamespace, "namespace", "", "reconcile objects in this namespace only; default: all namespaces")
	fs.StringSliceVar(&o.Controllers, "controllers", controller.GroupNames(), "controller groups to run, comma-separated: "+fmt.Sprint(controller.GroupNames()))
	fs.IntVar(&o.Concurrency, "concurrency", 10, "objects each controller reconciles at once")
	fs.BoolVar(&o.IPReuse, "ip-reuse", false, "name a Metal3Data's IPClaims after its BareMetalHost (<host>-<pool>) so the host keeps its address across re-provisioning (CAPM3's enableBMHNameBasedPreallocation)")
	fs.IntVar(&o.FabricConcurrency, "fabric-concurrency", networkdevice.DefaultConcurrency, "switches the fabric controller configures at once (each waits on its switch, not on this machine's CPU)")
	fs.DurationVar(&o.SyncPeriod, "sync-period", 10*time.Minute, "how often every watched object is reconciled again even without a change")
	fs.DurationVar(&o.GracefulShutdown, "graceful-shutdown-timeout", 10*time.Second, "how long the controllers may take to finish their work once told to stop; keep it below the Pod's terminationGracePeriodSeconds")
	fs.Float32Var(&o.QPS, "kube-api-qps", 400, "queries per second the manager may send to the API server (docs/scale.md: why 400)")
	fs.IntVar(&o.Burst, "kube-api-burst", 800, "burst of queries the manager may send to the API server")
	fs.IntVar(&o.WebhookPort, "webhook-port", 9443, "port the webhook server listens on")
	fs.StringVar(&o.WebhookCertDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs", "folder holding the webhook server's tls.crt and tls.key")
	o.addCAPM3Flags(fs)
	o.addRemediationFlags(fs)
	o.Logs = logs.NewOptions()
	logsv1.AddFlags(o.Logs, fs)
}

// capm3ConcurrencyFlags maps CAPM3's per-controller concurrency flags to metalwire's controller
// names; metal3dataclaim has no upstream flag (upstream has no such controller) but gets one.
var capm3ConcurrencyFlags = map[string]string{
	"metal3machine-concurrency":         "metal3machine",
	"metal3cluster-concurrency":         "metal3cluster",
	"metal3datatemplate-concurrency":    "metal3datatemplate",
	"metal3dataclaim-concurrency":       "metal3dataclaim",
	"metal3data-concurrency":            "metal3data",
	"metal3labelsync-concurrency":       "metal3labelsync",
	"metal3machinetemplate-concurrency": "metal3machinetemplate",
	"metal3remediation-concurrency":     "metal3remediation",
}

// addCAPM3Flags adds the flags CAPM3 users pass, so that a deployment's arguments carry over.
func (o *Options) addCAPM3Flags(fs *pflag.FlagSet) {
	fs.StringVar(&o.WatchFilter, "watch-filter", "", "Cluster API's watch filter: every controller acts only on objects labelled "+clusterv1.WatchLabel+"=<value> (clusters, machines and templates, data templates, claims and data, remediations, IP pools and claims, pre-provisioning templates and their hosts, ClusterNetworks, NetworkDevices); the Metal3DataClaim, Metal3Data and IP claims metalwire makes for a labelled machine carry the label; default: all")
	fs.BoolVar(&o.IPReuse, "enable-bmh-name-based-preallocation", false, "CAPM3's name for --ip-reuse; either turns it on")
	fs.BoolVar(&o.FastTrack, "fast-track", os.Getenv("CAPM3_FAST_TRACK") == "true", "keep a deprovisioned host powered on (unless its automatedCleaningMode is disabled) so the next machine provisions it without a reboot; default: true when the environment variable CAPM3_FAST_TRACK is \"true\", as upstream")
	o.controllerFlagValue = map[string]*int{}
	for flag, name := range capm3ConcurrencyFlags {
		o.controllerFlagValue[name] = fs.Int(flag, 0, "objects the "+name+" controller reconciles at once; 0: --concurrency")
	}
}

// ControllerConcurrency is what the --<controller>-concurrency flags set, by controller name.
func (o *Options) ControllerConcurrency() map[string]int {
	out := map[string]int{}
	for name, v := range o.controllerFlagValue {
		if v != nil && *v > 0 {
			out[name] = *v
		}
	}
	return out
}

// Groups parses --controllers; its error is a usage mistake.
func (o *Options) Groups() ([]controller.Group, error) {
	return controller.ParseGroups(o.Controllers)
}
