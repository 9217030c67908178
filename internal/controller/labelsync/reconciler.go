package labelsync

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/annotations"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/mapping"
	"github.com/metalwire/metalwire/internal/controller/watchfilter"
	workloadclient "github.com/metalwire/metalwire/internal/controller/workload"
)

// ControllerName names the controller, and its --metal3labelsync-concurrency flag (upstream's).
const ControllerName = "metal3labelsync"

// defaultResync is how often a host is synced again without an event: the workload cluster's
// Nodes send none, so a label changed there by hand is put right at the next pass (upstream: 60s).
const defaultResync = time.Minute

// Reconciler syncs one BareMetalHost's prefixed labels to its Node.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// WorkloadClient reaches a workload cluster's API server.
	WorkloadClient workloadclient.ClientFunc
	// WatchFilter is --watch-filter: with a value, only hosts whose Metal3Machine carries the
	// label are synced.
	WatchFilter string
	// Resync is how often a synced host is looked at again; zero means a minute.
	Resync time.Duration
}

// +kubebuilder:rbac:groups=metal3.io,resources=baremetalhosts,verbs=get;list;watch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3machines;metal3clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines;clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile follows host -> consumerRef Metal3Machine -> owner Machine -> status.nodeRef, and
// the Machine's Cluster -> Metal3Cluster for the prefixes; any link missing means nothing to do
// yet (the watches bring the host back when it appears).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	host := &bmov1.BareMetalHost{}
	if err := r.Client.Get(ctx, req.NamespacedName, host); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ref := host.Spec.ConsumerRef
	if ref == nil || ref.Kind != "Metal3Machine" || ref.GroupVersionKind().Group != infrav1.GroupVersion.Group {
		return ctrl.Result{}, nil
	}
	if _, paused := host.Annotations[bmov1.PausedAnnotation]; paused {
		return ctrl.Result{}, nil
	}
	m3m := &infrav1.Metal3Machine{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: host.Namespace, Name: ref.Name}, m3m); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !watchfilter.Matches(m3m, r.WatchFilter) {
		return ctrl.Result{}, nil
	}
	machine, err := util.GetOwnerMachine(ctx, r.Client, m3m.ObjectMeta)
	if err != nil || machine == nil || !machine.Status.NodeRef.IsDefined() {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: machine.Namespace, Name: machine.Spec.ClusterName}, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if cluster.Spec.InfrastructureRef.Kind != "Metal3Cluster" {
		return ctrl.Result{}, nil
	}
	m3c := &infrav1.Metal3Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: cluster.Spec.InfrastructureRef.Name}, m3c); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if annotations.IsPaused(cluster, m3c) {
		return ctrl.Result{}, nil
	}
	value, ok := m3c.Annotations[PrefixAnnotation]
	if !ok {
		return ctrl.Result{}, nil
	}
	prefixes, err := parsePrefixes(value)
	if err != nil {
		// The user's mistake, on the Metal3Cluster: said there, and retried only when it changes.
		r.Recorder.Eventf(m3c, host, corev1.EventTypeWarning, "LabelSyncPrefixesInvalid", "SyncLabels", "%v", err)
		return ctrl.Result{}, nil
	}

	if err := r.syncNode(ctx, client.ObjectKeyFromObject(cluster), machine.Status.NodeRef.Name, host, prefixes); err != nil {
		r.Recorder.Eventf(m3c, host, corev1.EventTypeWarning, "LabelSyncFailed", "SyncLabels", "syncing the labels of host %s to Node %s: %v", host.Name, machine.Status.NodeRef.Name, err)
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: r.resync()}, nil
}

func (r *Reconciler) syncNode(ctx context.Context, cluster client.ObjectKey, nodeName string, host *bmov1.BareMetalHost, prefixes map[string]bool) error {
	workload, err := r.WorkloadClient(ctx, cluster)
	if err != nil {
		return fmt.Errorf("reaching the workload cluster: %w", err)
	}
	node := &corev1.Node{}
	if err := workload.Get(ctx, client.ObjectKey{Name: nodeName}, node); err != nil {
		return err
	}
	labels, changed := syncLabels(host.Labels, node.Labels, prefixes)
	if !changed {
		return nil
	}
	orig := node.DeepCopy()
	node.Labels = labels
	// Optimistic lock: a label written by someone else meanwhile is not lost to our copy.
	if err := workload.Patch(ctx, node, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return err
	}
	ctrl.LoggerFrom(ctx).Info("synced host labels to the Node", "node", nodeName)
	return nil
}

func (r *Reconciler) resync() time.Duration {
	if r.Resync > 0 {
		return r.Resync
	}
	return defaultResync
}

// SetupWithManager watches hosts, the Machines that get a nodeRef, and Metal3Clusters whose
// prefixes change.
func (r *Reconciler) SetupWithManager(_ context.Context, mgr ctrl.Manager, concurrency int) error {
	if r.WorkloadClient == nil {
		return errors.New("labelsync: no WorkloadClient")
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&bmov1.BareMetalHost{}).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(r.machineToHost)).
		Watches(&infrav1.Metal3Cluster{}, handler.EnqueueRequestsFromMapFunc(r.metal3ClusterToHosts)).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(concurrency, 1)}).
		Named(ControllerName).
		Complete(r)
}

// hostOf is the host a Metal3Machine's annotation names.
func hostOf(m3m *infrav1.Metal3Machine) (client.ObjectKey, bool) {
	ns, name, set, err := infrav1.ParseHostAnnotation(m3m.Annotations[infrav1.HostAnnotation], m3m.Namespace)
	if err != nil || !set {
		return client.ObjectKey{}, false
	}
	return client.ObjectKey{Namespace: ns, Name: name}, true
}

func (r *Reconciler) machineToHost(ctx context.Context, o client.Object) []reconcile.Request {
	machine, ok := o.(*clusterv1.Machine)
	if !ok || machine.Spec.InfrastructureRef.Kind != "Metal3Machine" || !machine.Status.NodeRef.IsDefined() {
		return nil
	}
	m3m := &infrav1.Metal3Machine{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: machine.Namespace, Name: machine.Spec.InfrastructureRef.Name}, m3m); err != nil {
		return nil
	}
	if key, ok := hostOf(m3m); ok {
		return []reconcile.Request{{NamespacedName: key}}
	}
	return nil
}

// metal3ClusterToHosts maps a Metal3Cluster to the hosts of its cluster's machines.
func (r *Reconciler) metal3ClusterToHosts(ctx context.Context, o client.Object) []reconcile.Request {
	m3c, ok := o.(*infrav1.Metal3Cluster)
	if !ok {
		return nil
	}
	cluster := m3c.Labels[clusterv1.ClusterNameLabel]
	if cluster == "" {
		if owner, err := util.GetOwnerCluster(ctx, r.Client, m3c.ObjectMeta); err == nil && owner != nil {
			cluster = owner.Name
		}
	}
	if cluster == "" {
		return nil
	}
	return mapping.ListedTo(ctx, r.Client, &infrav1.Metal3MachineList{}, "the Metal3Machines of cluster "+cluster+" for label sync",
		func(m client.Object) (client.ObjectKey, bool) {
			m3m, ok := m.(*infrav1.Metal3Machine)
			if !ok {
				return client.ObjectKey{}, false
			}
			return hostOf(m3m)
		}, client.InNamespace(o.GetNamespace()), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster})
}
