package metal3cluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/mapping"
	"github.com/metalwire/metalwire/internal/controller/skeleton"
	"github.com/metalwire/metalwire/internal/controller/watchfilter"
)

// machinesGoneRecheck is how often deletion looks again for the cluster's Metal3Machines; their
// deletion triggers a reconcile, this is only a safety net.
const machinesGoneRecheck = time.Minute

// Reconciler owns Metal3Cluster status: provisioned, failure domains and conditions.
type Reconciler struct {
	Client client.Client
	// APIReader reads the cluster's Metal3Machines from the API server itself before the
	// finalizer goes: a machine created just before the deletion may not be in the cache yet,
	// and letting the Metal3Cluster go under it cannot be undone. Nil reads through Client.
	APIReader client.Reader
	Recorder  events.EventRecorder
	// WatchFilter is --watch-filter: with a value, only Metal3Clusters labelled
	// cluster.x-k8s.io/watch-filter=<value> are reconciled.
	WatchFilter string
}

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3clusters,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3clusters/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3machines,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters;clusters/status,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one Metal3Cluster's status up to date, in the reconcilers' one shape
// (skeleton): the Cluster that owns it pauses it, and its Paused condition is written with the rest.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return skeleton.Reconcile(ctx, req, skeleton.Kind[*infrav1.Metal3Cluster]{
		Client: r.Client, WatchFilter: r.WatchFilter,
		New: func() *infrav1.Metal3Cluster { return &infrav1.Metal3Cluster{} },
		Cluster: func(ctx context.Context, m3c *infrav1.Metal3Cluster) (*clusterv1.Cluster, error) {
			cluster, err := util.GetOwnerCluster(ctx, r.Client, m3c.ObjectMeta)
			if err != nil {
				return nil, fmt.Errorf("reading the Cluster that owns Metal3Cluster %s: %w", m3c.Name, err)
			}
			return cluster, nil
		},
		PausedCondition: true,
		Finalizer:       infrav1.ClusterFinalizer,
		Normal: func(_ context.Context, s *skeleton.Scope[*infrav1.Metal3Cluster]) (ctrl.Result, error) {
			r.reconcileNormal(s.Object, s.Cluster)
			return ctrl.Result{}, nil
		},
		Delete: func(ctx context.Context, s *skeleton.Scope[*infrav1.Metal3Cluster]) (ctrl.Result, error) {
			return r.reconcileDelete(ctx, s.Object)
		},
		Ready:           &readySummary,
		OwnedConditions: []string{infrav1.Metal3ClusterReadyCondition, infrav1.BaremetalInfrastructureReadyCondition, OwnedByClusterCondition},
	})
}

// reconcileNormal judges the endpoint and whether a Cluster owns the Metal3Cluster; Ready is
// summarised from the two (readySummary).
func (r *Reconciler) reconcileNormal(m3c *infrav1.Metal3Cluster, cluster *clusterv1.Cluster) {
	infra := endpointCondition(m3c.Spec.ControlPlaneEndpoint)
	// Warn once per change of the verdict, not on every resync.
	changed := !conditions.Has(m3c, infra.Type) || conditions.Get(m3c, infra.Type).Message != infra.Message
	conditions.Set(m3c, infra)
	// The endpoint is judged regardless, but Ready must say what else is missing.
	conditions.Set(m3c, ownerCondition(cluster != nil))

	// Failure domains are the user's to declare; Cluster API reads them from status.
	m3c.Status.FailureDomains = m3c.Spec.FailureDomains
	if infra.Status == metav1.ConditionTrue {
		if !ptr.Deref(m3c.Status.Initialization.Provisioned, false) {
			r.Recorder.Eventf(m3c, nil, corev1.EventTypeNormal, "Provisioned", "Provision",
				"control plane endpoint %s:%d is set; the cluster's infrastructure is provisioned",
				m3c.Spec.ControlPlaneEndpoint.Host, m3c.Spec.ControlPlaneEndpoint.Port)
			m3c.Status.LastUpdated = ptr.To(metav1.Now())
		}
		m3c.Status.Initialization.Provisioned = ptr.To(true)
	} else if changed {
		r.Recorder.Eventf(m3c, nil, corev1.EventTypeWarning, infrav1.ControlPlaneEndpointFailedReason, "Provision", "%s", infra.Message)
	}
}

// reconcileDelete keeps the Metal3Cluster while Metal3Machines of its cluster exist: they need
// it (cloud provider setting) to release their hosts cleanly.
func (r *Reconciler) reconcileDelete(ctx context.Context, m3c *infrav1.Metal3Cluster) (ctrl.Result, error) {
	conditions.Set(m3c, deletingCondition("the Metal3Cluster is being deleted"))

	clusterName := m3c.Labels[clusterv1.ClusterNameLabel]
	if clusterName != "" {
		reader := client.Reader(r.Client)
		if r.APIReader != nil {
			reader = r.APIReader
		}
		machines := &infrav1.Metal3MachineList{}
		if err := reader.List(ctx, machines, client.InNamespace(m3c.Namespace),
			client.MatchingLabels{clusterv1.ClusterNameLabel: clusterName}); err != nil {
			return ctrl.Result{}, err
		}
		if n := len(machines.Items); n > 0 {
			conditions.Set(m3c, deletingCondition(fmt.Sprintf("waiting for %d Metal3Machines of cluster %s to be deleted (first: %s)",
				n, clusterName, machines.Items[0].Name)))
			return ctrl.Result{RequeueAfter: machinesGoneRecheck}, nil
		}
	}
	controllerutil.RemoveFinalizer(m3c, infrav1.ClusterFinalizer)
	return ctrl.Result{}, nil
}

// SetupWithManager watches Metal3Clusters; Clusters, so that setting the owner reference or
// (un)pausing a Cluster reaches its Metal3Cluster at once; and Metal3Machines going away, so that
// a deleted Metal3Cluster goes as soon as its last machine has.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, concurrency int) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&infrav1.Metal3Cluster{}, builder.WithPredicates(watchfilter.Predicate(r.WatchFilter))).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(
			util.ClusterToInfrastructureMapFunc(ctx, infrav1.GroupVersion.WithKind("Metal3Cluster"), mgr.GetClient(), &infrav1.Metal3Cluster{}))).
		Watches(&infrav1.Metal3Machine{}, handler.EnqueueRequestsFromMapFunc(r.machineToCluster),
			builder.WithPredicates(predicate.Funcs{
				CreateFunc:  func(event.CreateEvent) bool { return false },
				UpdateFunc:  func(event.UpdateEvent) bool { return false },
				GenericFunc: func(event.GenericEvent) bool { return false },
			})).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(concurrency, 1)}).
		Named("metal3cluster").
		Complete(r)
}

// machineToCluster maps a Metal3Machine to the Metal3Clusters of its cluster (normally one).
func (r *Reconciler) machineToCluster(ctx context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[clusterv1.ClusterNameLabel]
	if name == "" {
		return nil
	}
	return mapping.Listed(ctx, r.Client, &infrav1.Metal3ClusterList{}, "the Metal3Clusters of cluster "+name, nil,
		client.InNamespace(o.GetNamespace()), client.MatchingLabels{clusterv1.ClusterNameLabel: name})
}
