package manager

import (
	"flag"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/metalwire/metalwire/internal/controller"
)

// Options are the settings of the manager, bound to command-line flags by AddFlags.
type Options struct {
	Kubeconfig              string
	MetricsAddr             string
	ProbeAddr               string
	ProfilerAddr            string
	LeaderElect             bool
	LeaderElectionID        string
	LeaderElectionNamespace string
	WatchNamespace          string
	Controllers             []string
	Concurrency             int
	IPReuse                 bool
	SyncPeriod              time.Duration
	QPS                     float32
	Burst                   int
	Zap                     zap.Options
}

// AddFlags binds every option to a flag of fs, with its default.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "path to a kubeconfig; default: $KUBECONFIG, then the in-cluster service account")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", ":8080", `address the Prometheus metrics endpoint listens on; "0" turns it off`)
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":9440", "address the /healthz and /readyz endpoints listen on")
	fs.StringVar(&o.ProfilerAddr, "profiler-address", "", `address a Go pprof endpoint listens on (/debug/pprof/), e.g. "localhost:6060"; off by default`)
	fs.BoolVar(&o.LeaderElect, "leader-elect", true, "elect a leader so that only one replica reconciles at a time")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", "metalwire-manager.metalwire.io", "name of the Lease used for leader election")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader election Lease; default: the namespace the manager runs in")
	fs.StringVar(&o.WatchNamespace, "namespace", "", "reconcile objects in this namespace only; default: all namespaces")
	fs.StringSliceVar(&o.Controllers, "controllers", controller.GroupNames(), "controller groups to run, comma-separated: "+fmt.Sprint(controller.GroupNames()))
	fs.IntVar(&o.Concurrency, "concurrency", 10, "objects each controller reconciles at once")
	fs.BoolVar(&o.IPReuse, "ip-reuse", false, "name a Metal3Data's IPClaims after its BareMetalHost (<host>-<pool>) so the host keeps its address across re-provisioning (CAPM3's enableBMHNameBasedPreallocation)")
	fs.DurationVar(&o.SyncPeriod, "sync-period", 10*time.Minute, "how often every watched object is reconciled again even without a change")
	fs.Float32Var(&o.QPS, "kube-api-qps", 50, "queries per second the manager may send to the API server")
	fs.IntVar(&o.Burst, "kube-api-burst", 100, "burst of queries the manager may send to the API server")
	zapFlags := flag.NewFlagSet("zap", flag.ContinueOnError)
	o.Zap.BindFlags(zapFlags)
	fs.AddGoFlagSet(zapFlags)
}

// Groups parses --controllers; its error is a usage mistake.
func (o *Options) Groups() ([]controller.Group, error) {
	return controller.ParseGroups(o.Controllers)
}
