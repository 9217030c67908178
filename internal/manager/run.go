package manager

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	logsv1 "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/metalwire/metalwire/internal/controller"
	"github.com/metalwire/metalwire/internal/memorylimit"
	"github.com/metalwire/metalwire/internal/version"
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
	memorylimit.Set().Log(ctrl.Log.WithName("manager"))
	m, err := New(ctx, o, groups)
	if err != nil {
		return err
	}
	ctrl.Log.WithName("manager").Info("starting", "version", version.Get().Version, "groups", groups, "controllers", m.Controllers)
	if err := m.Start(ctx); err != nil {
		return fmt.Errorf("running the manager: %w", err)
	}
	return nil
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
