package devenv

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/metalwire/metalwire/internal/controlplane"
)

// clusterAPIWebhookPaths are the admission webhooks of Cluster API's core manager that dev mode
// serves (in metalwire-capi, beside Cluster API's controllers): defaulting and validation of the
// kinds whose controllers it runs. Without them a
// MachineDeployment written as for a real management cluster (no rollout strategy, no selector)
// would not reconcile.
var clusterAPIWebhookPaths = []string{
	"/mutate-cluster-x-k8s-io-v1beta2-cluster",
	"/validate-cluster-x-k8s-io-v1beta2-cluster",
	"/mutate-cluster-x-k8s-io-v1beta2-machine",
	"/validate-cluster-x-k8s-io-v1beta2-machine",
	"/mutate-cluster-x-k8s-io-v1beta2-machineset",
	"/validate-cluster-x-k8s-io-v1beta2-machineset",
	"/mutate-cluster-x-k8s-io-v1beta2-machinedeployment",
	"/validate-cluster-x-k8s-io-v1beta2-machinedeployment",
}

// clusterAPIWebhooks reads Cluster API's webhook configurations from its module and keeps those
// dev mode serves; installing the others would make the API server refuse their kinds.
func clusterAPIWebhooks() (*envtest.WebhookInstallOptions, error) {
	capi, err := controlplane.ModuleDir("sigs.k8s.io/cluster-api")
	if err != nil {
		return nil, err
	}
	file := filepath.Join(capi, "core", "config", "webhook", "manifests.yaml")
	docs, err := readManifests(file)
	if err != nil {
		return nil, err
	}
	opts := &envtest.WebhookInstallOptions{}
	for _, d := range docs {
		switch d.obj.GetKind() {
		case "MutatingWebhookConfiguration":
			cfg := &admissionv1.MutatingWebhookConfiguration{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(d.obj.Object, cfg); err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			cfg.Webhooks = slices.DeleteFunc(cfg.Webhooks, func(w admissionv1.MutatingWebhook) bool { return !served(w.ClientConfig) })
			opts.MutatingWebhooks = append(opts.MutatingWebhooks, cfg)
		case "ValidatingWebhookConfiguration":
			cfg := &admissionv1.ValidatingWebhookConfiguration{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(d.obj.Object, cfg); err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			cfg.Webhooks = slices.DeleteFunc(cfg.Webhooks, func(w admissionv1.ValidatingWebhook) bool { return !served(w.ClientConfig) })
			opts.ValidatingWebhooks = append(opts.ValidatingWebhooks, cfg)
		}
	}
	if len(opts.MutatingWebhooks) == 0 || len(opts.ValidatingWebhooks) == 0 {
		return nil, fmt.Errorf("%s: no webhook configurations found", file)
	}
	return opts, nil
}

func served(c admissionv1.WebhookClientConfig) bool {
	return c.Service != nil && c.Service.Path != nil && slices.Contains(clusterAPIWebhookPaths, *c.Service.Path)
}

// waitForWebhooks returns once mgr's webhook server answers, so that objects applied next as
// CAPM3's v1beta1 are converted instead of refused.
func waitForWebhooks(ctx context.Context, mgr ctrl.Manager) error {
	check := mgr.GetWebhookServer().StartedChecker()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return check(nil) == nil, nil
	})
	if err != nil {
		return errors.New("the admission webhook server did not start within a minute")
	}
	return nil
}
