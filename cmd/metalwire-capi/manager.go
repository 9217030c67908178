package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // Cluster API's webhooks still register conversions from v1beta1
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/metalwire/metalwire/internal/controller/cachepolicy"
	"github.com/metalwire/metalwire/internal/scheme"
)

// concurrency is each controller's workers and the ClusterCache's, as dev mode ran them before
// they had a process of their own.
const concurrency = 5

// newManager builds the manager of Cluster API's controllers and webhooks: no metrics, health
// probe or leader election (one copy runs, for one dev mode), the webhook server on f's address.
func newManager(ctx context.Context, cfg *rest.Config, f flags) (ctrl.Manager, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 100, 200
	// Cluster API's webhooks register conversions from v1beta1, so its types must be known; the
	// controllers follow infrastructure references to metalwire's kinds.
	s := scheme.New()
	if err := clusterv1beta1.AddToScheme(s); err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 s,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: f.webhookHost, Port: f.webhookPort, CertDir: f.certDir,
		}),
	})
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	clusterCache, err := cachepolicy.NewClusterCache(ctx, mgr, "metalwire-capi", concurrency)
	if err != nil {
		return nil, err
	}
	if err := setupClusterAPI(ctx, mgr, clusterCache); err != nil {
		return nil, err
	}
	return mgr, nil
}

// waitServing returns once mgr's webhook server answers and its caches have synced, so that
// objects dev mode applies next are defaulted and reconciled instead of refused.
func waitServing(ctx context.Context, mgr ctrl.Manager) error {
	check := mgr.GetWebhookServer().StartedChecker()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return check(nil) == nil, nil
	})
	if err != nil {
		return errors.New("the admission webhook server did not start within a minute")
	}
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return errors.New("the caches did not sync")
	}
	return nil
}
