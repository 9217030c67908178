package main

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/core/reconcilers/cluster"
	"sigs.k8s.io/cluster-api/core/reconcilers/machine"
	"sigs.k8s.io/cluster-api/core/reconcilers/machinedeployment"
	"sigs.k8s.io/cluster-api/core/reconcilers/machinehealthcheck"
	"sigs.k8s.io/cluster-api/core/reconcilers/machineset"
	coreadmission "sigs.k8s.io/cluster-api/core/webhooks/admission"
	"sigs.k8s.io/cluster-api/util/index"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"
)

// Grace periods as Cluster API's manager defaults them (its --remote-*-grace-period flags).
const (
	remoteConnectionGracePeriod = 50 * time.Second
	remoteConditionsGracePeriod = 5 * time.Minute
)

// setupClusterAPI adds Cluster API's Cluster, Machine, MachineSet, MachineDeployment and
// MachineHealthCheck controllers and the defaulting and validating webhooks of the first four to
// mgr, configured as Cluster API's own manager configures them.
//
// There is no workload cluster in dev mode: no Cluster has a <name>-kubeconfig Secret, so the
// ClusterCache never connects, and the Machine controller, which would look for the Machine's
// Node there, leaves status.nodeRef empty and retries. Machines therefore stop at phase
// Provisioned (infrastructure ready, providerID set) and never become Running; everything
// metalwire does happens before that point.
//
// clusterCache is the manager's ClusterCache; metalwire's Metal3Machine controller, in dev
// mode's own process, has its own.
func setupClusterAPI(ctx context.Context, mgr ctrl.Manager, clusterCache clustercache.ClusterCache) error {
	if err := index.AddDefaultIndexes(ctx, mgr); err != nil {
		return fmt.Errorf("cluster-api indexes: %w", err)
	}
	opts := controller.Options{MaxConcurrentReconciles: concurrency}
	if err := (&cluster.Reconciler{
		Client:                      mgr.GetClient(),
		APIReader:                   mgr.GetAPIReader(),
		ClusterCache:                clusterCache,
		RemoteConnectionGracePeriod: remoteConnectionGracePeriod,
	}).SetupWithManager(ctx, mgr, opts); err != nil {
		return fmt.Errorf("cluster-api Cluster controller: %w", err)
	}
	if err := (&machine.Reconciler{
		Client:                      mgr.GetClient(),
		APIReader:                   mgr.GetAPIReader(),
		ClusterCache:                clusterCache,
		RemoteConditionsGracePeriod: remoteConditionsGracePeriod,
	}).SetupWithManager(ctx, mgr, opts); err != nil {
		return fmt.Errorf("cluster-api Machine controller: %w", err)
	}
	if err := (&machineset.Reconciler{
		Client:       mgr.GetClient(),
		APIReader:    mgr.GetAPIReader(),
		ClusterCache: clusterCache,
	}).SetupWithManager(ctx, mgr, opts); err != nil {
		return fmt.Errorf("cluster-api MachineSet controller: %w", err)
	}
	if err := (&machinedeployment.Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
	}).SetupWithManager(ctx, mgr, opts); err != nil {
		return fmt.Errorf("cluster-api MachineDeployment controller: %w", err)
	}
	// MachineHealthChecks, so that a Metal3RemediationTemplate can be tried out here; with no
	// workload cluster only the cluster.x-k8s.io/remediate-machine annotation marks a Machine
	// unhealthy.
	if err := (&machinehealthcheck.Reconciler{
		Client:       mgr.GetClient(),
		ClusterCache: clusterCache,
	}).SetupWithManager(ctx, mgr, opts); err != nil {
		return fmt.Errorf("cluster-api MachineHealthCheck controller: %w", err)
	}
	return setupWebhooks(mgr, clusterCache)
}

// setupWebhooks registers Cluster API's defaulting and validating webhooks of the kinds whose
// controllers run here on mgr's webhook server. Dev mode installs the webhook configurations
// calling them (internal/devenv's clusterAPIWebhookPaths lists their paths).
func setupWebhooks(mgr ctrl.Manager, clusterCache clustercache.ClusterCache) error {
	for name, setup := range map[string]interface{ SetupWebhookWithManager(ctrl.Manager) error }{
		"Cluster":           &coreadmission.Cluster{Client: mgr.GetAPIReader(), ClusterCacheReader: clusterCache},
		"Machine":           &coreadmission.Machine{},
		"MachineSet":        &coreadmission.MachineSet{},
		"MachineDeployment": &coreadmission.MachineDeployment{},
	} {
		if err := setup.SetupWebhookWithManager(mgr); err != nil {
			return fmt.Errorf("cluster-api %s webhook: %w", name, err)
		}
	}
	return nil
}
