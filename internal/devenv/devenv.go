package devenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/metalwire/metalwire/internal/controller"
	"github.com/metalwire/metalwire/internal/controlplane"
	"github.com/metalwire/metalwire/internal/manager"
	"github.com/metalwire/metalwire/internal/simulator"
	"github.com/metalwire/metalwire/internal/webhooks"
)

// DefaultDir is where dev mode keeps its kubeconfig, log and host files, below the working
// directory.
const DefaultDir = ".metalwire/dev"

// Options say what to run.
type Options struct {
	// Dir holds the kubeconfig, the manager log and the host files (DefaultDir if empty).
	Dir string
	// Hosts is how many simulated BareMetalHosts to create.
	Hosts int
	// Namespace the hosts are created in ("default" if empty).
	Namespace string
	// HostOptions are labels and annotations for the hosts.
	HostOptions simulator.HostOptions
	// Apply lists manifest files or directories to apply once everything runs.
	Apply []string
	// Delays of the simulator; zero values take simulator.DefaultDelays.
	Delays simulator.Delays
	// MakeTools lets dev mode run `make tools` when kube-apiserver or etcd is missing.
	MakeTools bool
	// IPReuse runs the data controllers as `metalwire manager --ip-reuse` does: address claims
	// named after the host, so a host keeps its pre-provisioning address once provisioned.
	IPReuse bool
	// AdmissionPlugins are turned on in kube-apiserver beside its defaults.
	AdmissionPlugins []string
	// Controllers are the groups of metalwire's controllers to run (nil: every group). An empty,
	// non-nil list runs Cluster API's controllers and the simulator but none of metalwire's: the
	// caller runs metalwire's manager itself (`metalwire dev --controllers=none`, then `metalwire
	// manager`; the install test, with the ServiceAccount's identity).
	Controllers []controller.Group
	// Out receives one line per step and per host state change (io.Discard if nil).
	Out io.Writer
	// Log receives the controllers' logs (Dir/manager.log if nil).
	Log io.Writer
}

// Env is a running development environment.
type Env struct {
	// Control is the API server and etcd.
	Control *controlplane.Env
	// Client talks to the API server directly (uncached).
	Client client.Client
	// Simulator is the BMO stand-in; its Dir is where host files go.
	Simulator *simulator.Simulator
	// KubeconfigPath is the kubeconfig file written for kubectl.
	KubeconfigPath string
	// Controllers names every controller running, metalwire's and Cluster API's.
	Controllers []string
	// ClusterAPIPID is the process id of metalwire-capi, which runs Cluster API's controllers
	// and webhooks; Stop ends it.
	ClusterAPIPID int

	cancel     context.CancelFunc
	done       chan error
	clusterAPI *clusterAPI
	logFile    *os.File
}

// printer writes progress lines; host state changes arrive from many goroutines.
type printer struct {
	mu  sync.Mutex
	out io.Writer
}

func (p *printer) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _ = fmt.Fprintf(p.out, format+"\n", args...)
}

// Start brings the environment up, step by step, reporting each on opts.Out, and returns once the
// hosts exist and the manifests are applied. The controllers keep running until Stop.
func Start(ctx context.Context, opts Options) (_ *Env, reterr error) {
	if opts.Dir == "" {
		opts.Dir = DefaultDir
	}
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	p := &printer{out: opts.Out}
	if err := os.MkdirAll(opts.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("--dir %s: %w", opts.Dir, err)
	}
	if err := ensureControlPlane(ctx, opts.MakeTools, p); err != nil {
		return nil, err
	}
	capiBinary, err := findClusterAPIBinary(ctx, opts.MakeTools, p)
	if err != nil {
		return nil, err
	}

	control, err := controlplane.StartWith(controlplane.Options{AdmissionPlugins: opts.AdmissionPlugins})
	if err != nil {
		return nil, err
	}
	e := &Env{Control: control, Client: control.Client, done: make(chan error, 1)}
	defer func() {
		if reterr != nil {
			reterr = errors.Join(reterr, e.Stop())
		}
	}()
	p.printf("control plane started: kube-apiserver %s (etcd and kube-apiserver from bin/)", control.Config.Host)
	crds, err := countCRDs(ctx, control.Client)
	if err != nil {
		return e, err
	}
	p.printf("CRDs installed: %d (metalwire, Cluster API, BareMetalHost)", crds)

	e.KubeconfigPath = filepath.Join(opts.Dir, "kubeconfig")
	if err := os.WriteFile(e.KubeconfigPath, control.KubeConfig, 0o600); err != nil {
		return e, fmt.Errorf("writing the kubeconfig: %w", err)
	}
	p.printf("kubeconfig written: export KUBECONFIG=%s", absolute(e.KubeconfigPath))

	logs := opts.Log
	if logs == nil {
		if e.logFile, err = os.Create(filepath.Join(opts.Dir, "manager.log")); err != nil {
			return e, fmt.Errorf("creating the manager log: %w", err)
		}
		logs = e.logFile
	}
	// The controllers' log and Cluster API's process's lines arrive from many goroutines.
	logs = &syncWriter{w: logs}
	if e.clusterAPI, err = startClusterAPI(ctx, capiBinary, absolute(e.KubeconfigPath), control.Config, logs); err != nil {
		return e, err
	}
	e.ClusterAPIPID = e.clusterAPI.pid()
	e.Simulator = &simulator.Simulator{
		Dir:    opts.Dir,
		Delays: opts.Delays,
		OnTransition: func(t simulator.Transition) {
			p.printf("host %s: %s -> %s", t.Host, orNone(string(t.From)), t.To)
		},
	}
	mgrCtx, cancel := context.WithCancel(ctx)
	mgr, err := e.newManager(mgrCtx, logs, opts)
	if err != nil {
		cancel()
		return e, err
	}
	e.cancel = cancel // from here on Stop waits for the manager to end
	go func() { e.done <- mgr.Start(mgrCtx) }()
	if !mgr.GetCache().WaitForCacheSync(mgrCtx) {
		return e, errors.New("the controllers' caches did not sync; see " + logPath(opts))
	}
	if err := waitForWebhooks(mgrCtx, mgr); err != nil {
		return e, err
	}
	p.printf("controllers running: %s", strings.Join(e.Controllers, ", "))
	if opts.Controllers != nil && len(opts.Controllers) == 0 {
		p.printf("metalwire's controllers are not running here (--controllers=none); run them yourself: metalwire manager --kubeconfig %s --leader-elect=false", absolute(e.KubeconfigPath))
	}
	p.printf("host simulator running (a stand-in for baremetal-operator); host files in %s", filepath.Join(opts.Dir, "hosts"))

	if opts.Hosts > 0 {
		names, err := e.Simulator.CreateHosts(ctx, opts.Namespace, opts.Hosts, opts.HostOptions)
		if err != nil {
			return e, err
		}
		p.printf("%d hosts created in namespace %s: %s", len(names), opts.Namespace, span(names))
		if err := e.Simulator.CreateFabric(ctx, opts.Namespace, names); err != nil {
			return e, err
		}
		p.printf("simulated switch %s (a STAND-IN: configures nothing real) cabled to every host: NetworkDevice %s, one NIC object per host", simulator.SwitchName, simulator.SwitchNetworkDevice)
	}
	for _, path := range opts.Apply {
		n, err := Apply(ctx, e.Client, path)
		if err != nil {
			return e, err
		}
		p.printf("applied %s: %d objects", path, n)
	}
	lines, err := describeSwitches(ctx, e.Client)
	if err != nil {
		return e, err
	}
	for _, l := range lines {
		p.printf("%s", l)
	}
	return e, nil
}

// newManager builds dev mode's manager: metalwire's controllers as the image builds them
// (manager.New), with the simulator beside them. Cluster API's controllers run in a process of
// their own (startClusterAPI).
func (e *Env) newManager(ctx context.Context, logs io.Writer, opts Options) (ctrl.Manager, error) {
	log := newLogger(logs)
	ctrl.SetLogger(log)
	ctx = ctrl.LoggerInto(ctx, log)
	hooks := e.Control.Webhooks
	o := manager.NewOptions()
	o.RestConfig, o.Logger = e.Control.Config, log
	o.QPS, o.Burst, o.Concurrency = 100, 200, 5
	o.IPReuse = opts.IPReuse
	// Metrics and probes are not served: one process may run dev mode more than once (the tests
	// of metalwire demo and dev), so controller names must be allowed again and no port clash.
	o.MetricsAddr, o.ProbeAddr, o.LeaderElect, o.SkipNameValidation = "0", "0", false, true
	// The CRDs convert CAPM3's v1beta1 through this manager's webhook server, as in a cluster.
	o.WebhookHost, o.WebhookPort, o.WebhookCertDir = hooks.LocalServingHost, hooks.LocalServingPort, hooks.LocalServingCertDir
	o.SetupWebhooks = webhooks.SetupConversion
	o.SwitchDrivers = switchDrivers()
	o.ClusterCacheName = "metalwire-dev"
	groups := opts.Controllers
	if groups == nil {
		groups = controller.AllGroups
	}
	mgr, err := manager.New(ctx, o, groups)
	if err != nil {
		return nil, err
	}
	e.Controllers = append(e.Controllers, mgr.Controllers...)
	e.Controllers = append(e.Controllers, fmt.Sprintf("cluster-api: Cluster, Machine, MachineSet, MachineDeployment, MachineHealthCheck (and their webhooks; process %s, pid %d)", ClusterAPIBinary, e.ClusterAPIPID),
		"conversion webhooks (CAPM3 v1beta1 <-> v1beta2)")
	e.Simulator.RenderedSecrets = mgr.RenderedSecrets
	if err := e.Simulator.SetupWithManager(ctx, mgr); err != nil {
		return nil, err
	}
	e.Controllers = append(e.Controllers, "BareMetalHost simulator")
	return mgr, nil
}

// Stop stops metalwire's controllers, then Cluster API's process, then the API server and etcd.
func (e *Env) Stop() error {
	var errs []error
	if e.cancel != nil {
		e.cancel()
		if err := <-e.done; err != nil {
			errs = append(errs, fmt.Errorf("controllers: %w", err))
		}
		e.cancel = nil
	}
	if e.clusterAPI != nil {
		errs = append(errs, e.clusterAPI.stop())
		e.clusterAPI = nil
	}
	if e.Control != nil {
		if err := e.Control.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stopping the control plane: %w", err))
		}
		e.Control = nil
	}
	if e.logFile != nil {
		errs = append(errs, e.logFile.Close())
		e.logFile = nil
	}
	return errors.Join(errs...)
}

// Run starts the environment and keeps it running until ctx ends (Ctrl-C), then stops it.
func Run(ctx context.Context, opts Options) error {
	if opts.Dir == "" {
		opts.Dir = DefaultDir
	}
	e, err := Start(ctx, opts)
	if err != nil {
		return err
	}
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	_, _ = fmt.Fprintln(out, "running; press Ctrl-C to stop")
	select {
	case <-ctx.Done():
	case err := <-e.done:
		// The manager stopped by itself: report why, then stop the rest.
		e.cancel()
		e.cancel = nil
		return errors.Join(fmt.Errorf("the controllers stopped: %w", err), e.Stop())
	case <-e.clusterAPI.exited:
		// Cluster API's process ended by itself: say so, then stop the rest.
		return errors.Join(fmt.Errorf("%s (Cluster API's controllers) stopped (%s); see its lines in %s", ClusterAPIBinary, e.clusterAPI.state, logPath(opts)), e.Stop())
	}
	_, _ = fmt.Fprintln(out, "stopping")
	return e.Stop()
}

// logPath names where the controllers' logs go, for messages that send a person there.
func logPath(opts Options) string {
	if opts.Log != nil {
		return "the controllers' log"
	}
	return filepath.Join(opts.Dir, "manager.log")
}

func countCRDs(ctx context.Context, c client.Client) (int, error) {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("apiextensions.k8s.io/v1")
	list.SetKind("CustomResourceDefinitionList")
	if err := c.List(ctx, list); err != nil {
		return 0, fmt.Errorf("listing CRDs: %w", err)
	}
	return len(list.Items), nil
}

func absolute(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

func orNone(state string) string {
	if state == "" {
		return "(new)"
	}
	return state
}

// span shows a list of host names briefly: host-0 .. host-9.
func span(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return names[0] + " .. " + names[len(names)-1]
}
