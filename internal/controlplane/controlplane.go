package controlplane

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/metalwire/metalwire/internal/scheme"
)

// Env is a running control plane with every CRD metalwire needs.
type Env struct {
	// Config reaches the API server as an administrator.
	Config *rest.Config
	// Client is a direct (uncached) client with metalwire's scheme.
	Client client.Client
	// Scheme has every type metalwire uses.
	Scheme *runtime.Scheme
	// KubeConfig is a kubeconfig file's content that reaches the API server as Config does.
	KubeConfig []byte
	// Webhooks says where the API server calls the CRDs' conversion webhooks: a manager serves
	// them with webhook.Options{Host: LocalServingHost, Port: LocalServingPort, CertDir:
	// LocalServingCertDir}.
	Webhooks *envtest.WebhookInstallOptions

	env            *envtest.Environment
	stopConversion func() error
	restartable    bool
}

// Options add to what Start sets up.
type Options struct {
	// ServeConversion runs the conversion webhooks (CAPM3's v1beta1 <-> v1beta2) on Webhooks'
	// address until Stop, for tests that read or write v1beta1. Dev mode leaves it off: its own
	// manager serves them there (webhooks.SetupConversion).
	ServeConversion bool
	// AdmissionPlugins are turned on in kube-apiserver beside its defaults, e.g.
	// OwnerReferencesPermissionEnforcement, which many distributions run.
	AdmissionPlugins []string
	// StateDir, when set, holds etcd's data and kube-apiserver's certificates (created if
	// missing, never removed by Stop) so that StopControlPlane and StartControlPlane can restart
	// both on the same ports with the same data, as a real control plane restarts.
	StateDir string
	// AuditLog, when set, is a file kube-apiserver appends an audit event to for every write
	// request (create, update, patch, delete; metadata only), whatever answer it got.
	AuditLog string
	// FeatureGates, when set, is kube-apiserver's --feature-gates, e.g.
	// "DetectCacheInconsistency=false".
	FeatureGates string
}

// Start starts etcd and kube-apiserver from bin/ and installs the CRDs. It fails with
// "run make tools" when the binaries have not been built.
func Start() (*Env, error) {
	return StartWith(Options{})
}

// StartWith is Start with options.
func StartWith(opts Options) (*Env, error) {
	dir, err := BinDir()
	if err != nil {
		return nil, err
	}
	if err := checkBinaries(dir); err != nil {
		return nil, err
	}
	crds, err := CRDDirs()
	if err != nil {
		return nil, err
	}
	s := scheme.New()
	env := &envtest.Environment{
		BinaryAssetsDirectory: dir,
		CRDDirectoryPaths:     crds,
		ErrorIfCRDPathMissing: false,
		Scheme:                s,
	}
	if os.Getenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT") == "" {
		// envtest's 20 s is too short for a kube-apiserver starting on 2 busy cores (seen often
		// when several packages' tests start theirs at once); a slow start is not what is tested.
		env.ControlPlaneStartTimeout = 2 * time.Minute
	}
	if len(opts.AdmissionPlugins) > 0 {
		env.ControlPlane.GetAPIServer().Configure().Append("enable-admission-plugins", strings.Join(opts.AdmissionPlugins, ","))
	}
	if opts.FeatureGates != "" {
		env.ControlPlane.GetAPIServer().Configure().Append("feature-gates", opts.FeatureGates)
	}
	if err := configureRestarts(env, opts); err != nil {
		return nil, err
	}
	cfg, err := env.Start()
	if err != nil {
		// envtest leaves the API server and etcd running when a later step fails (installing
		// an invalid CRD): stop them, or each failed start leaves two processes behind.
		_ = env.Stop()
		return nil, fmt.Errorf("controlplane: starting kube-apiserver and etcd from %s: %w", dir, err)
	}
	// Tests create many objects quickly; the default client limits (5 QPS) would make them slow.
	cfg.QPS, cfg.Burst = 1000, 2000
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("controlplane: creating client: %w", err)
	}
	e := &Env{Config: cfg, Client: c, Scheme: s, KubeConfig: env.KubeConfig, Webhooks: &env.WebhookInstallOptions, env: env,
		restartable: opts.StateDir != ""}
	if opts.ServeConversion {
		if err := e.serveConversion(); err != nil {
			return nil, errors.Join(err, env.Stop())
		}
	}
	return e, nil
}

// Stop stops the conversion webhooks if they run, then the API server and etcd.
func (e *Env) Stop() error {
	var err error
	if e.stopConversion != nil {
		err = e.stopConversion()
		e.stopConversion = nil
	}
	return errors.Join(err, e.env.Stop())
}
