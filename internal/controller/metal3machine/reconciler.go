package metal3machine

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/dataindex"
	"github.com/metalwire/metalwire/internal/controller/fabricindex"
	"github.com/metalwire/metalwire/internal/controller/skeleton"
	"github.com/metalwire/metalwire/internal/controller/waits"
	"github.com/metalwire/metalwire/internal/controller/watchfilter"
)

// metal3MachineControllerName names the controller, in logs, metrics and the ClusterCache's sources.
const metal3MachineControllerName = "metal3machine"

// Defaults for the Reconciler's recheck intervals.
const (
	defaultNodeRecheck = 30 * time.Second
	defaultHostRecheck = time.Minute
)

// Reconciler owns Metal3Machine status and the claim of its BareMetalHost.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads from the API server directly, where a stale cache could make a machine
	// claim a second host.
	APIReader client.Reader
	Recorder  events.EventRecorder

	// Data claims rendered meta and network data for machines with spec.dataTemplate. With it
	// nil (a manager run without the data-templating controllers) such machines wait, saying so.
	Data DataTemplateClaimer

	// ClusterCache holds one client (and cache) per workload cluster, made from the cluster's
	// <cluster>-kubeconfig Secret by Cluster API's ClusterCache; the manager shares it with Cluster
	// API's controllers where they run in the same process (dev mode).
	ClusterCache clustercache.ClusterCache

	// WatchFilter is --watch-filter: with a value, only Metal3Machines labelled
	// cluster.x-k8s.io/watch-filter=<value> are reconciled.
	WatchFilter string

	// FastTrack keeps a deprovisioned host powered on (unless its cleaning is disabled), as
	// CAPM3_FAST_TRACK=true does upstream: the next machine provisions it without a reboot.
	FastTrack bool

	// NodeRecheck is how often to look again for the workload Node (its API server sends us no
	// events); HostRecheck how often a machine without a host looks again. Zero means defaults.
	NodeRecheck time.Duration
	HostRecheck time.Duration

	// QuietWaits is how long the changed words of a machine's lasting wait for a host stay
	// unwritten (waits.Rewrites): zero means waits.DefaultQuiet. A change of reason is written
	// at once.
	QuietWaits time.Duration

	// choice is the assignment of waiting machines to free hosts shared by all reconciles.
	choice hostChoice
	// waitWords is when each waiting machine's words were last written.
	waitWords waits.Rewrites
}

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3machines,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3machines/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3clusters;metal3datatemplates,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines;machines/status;clusters;clusters/status,verbs=get;list;watch
// +kubebuilder:rbac:groups=metal3.io,resources=baremetalhosts,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get;create;update
// +kubebuilder:rbac:groups=network.metalwire.io,resources=clusternetworks,verbs=get;list;watch
// +kubebuilder:rbac:groups=network.metalwire.io,resources=nics,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one Metal3Machine and its host in line, in the reconcilers' one shape
// (skeleton): the finalizer is persisted before a host is claimed (Cluster API's contract: a
// machine deleted just after its claim still gives its host back), and the machine is written
// once at the end by patchMachine.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var machine *clusterv1.Machine
	return skeleton.Reconcile(ctx, req, skeleton.Kind[*infrav1.Metal3Machine]{
		Client: r.Client, WatchFilter: r.WatchFilter,
		New: func() *infrav1.Metal3Machine { return &infrav1.Metal3Machine{} },
		Cluster: func(ctx context.Context, m3m *infrav1.Metal3Machine) (*clusterv1.Cluster, error) {
			return skeleton.ClusterOfOwnerMachine(ctx, r.Client, "Metal3Machine", m3m.ObjectMeta, &machine)
		},
		// Cluster API's Paused condition is written with the rest of this reconcile's status, not
		// by a patch of its own: one write less for every machine of a scale-up.
		PausedCondition: true,
		// BMO must not act on a host whose cluster is paused (a move between management
		// clusters, a maintenance): pause the host too. Nothing else is written.
		WhilePaused: func(ctx context.Context, s *skeleton.Scope[*infrav1.Metal3Machine]) (ctrl.Result, error) {
			return ctrl.Result{}, r.pauseHost(ctx, s.Object)
		},
		Finalizer: infrav1.MachineFinalizer,
		Normal: func(ctx context.Context, s *skeleton.Scope[*infrav1.Metal3Machine]) (ctrl.Result, error) {
			return r.reconcileNormal(ctx, s.Object, machine, s.Cluster)
		},
		Delete: func(ctx context.Context, s *skeleton.Scope[*infrav1.Metal3Machine]) (ctrl.Result, error) {
			return r.reconcileDelete(ctx, s.Object)
		},
		Ready: &readySummary,
		Write: r.patchMachine,
	})
}

// setCondition sets a condition with the machine's generation.
func setCondition(m3m *infrav1.Metal3Machine, typ string, status metav1.ConditionStatus, reason, message string) {
	conditions.Set(m3m, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message, ObservedGeneration: m3m.Generation})
}

// SetupWithManager registers the field indexes and the watches: Machines (bootstrap data),
// Clusters (pause, infrastructure provisioned) and BareMetalHosts (state changes of claimed
// hosts, and hosts becoming free for machines still waiting for one).
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, concurrency int) error {
	if r.NodeRecheck == 0 {
		r.NodeRecheck = defaultNodeRecheck
	}
	if r.HostRecheck == 0 {
		r.HostRecheck = defaultHostRecheck
	}
	if err := setupIndexes(ctx, mgr); err != nil {
		return err
	}
	if err := fabricindex.Setup(ctx, mgr); err != nil {
		return err
	}
	// The claimer finds a machine's Metal3Data by its claim.
	if err := dataindex.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	clusterToMachines, err := util.ClusterToTypedObjectsMapper(mgr.GetClient(), &infrav1.Metal3MachineList{}, mgr.GetScheme())
	if err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr)
	if r.ClusterCache != nil {
		// A connection to a workload cluster made or lost: its machines look for their Nodes now
		// rather than at the next recheck.
		b = b.WatchesRawSource(r.ClusterCache.GetClusterSource(metal3MachineControllerName, clusterToMachines))
	}
	return b.
		For(&infrav1.Metal3Machine{}, builder.WithPredicates(watchfilter.Predicate(r.WatchFilter))).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(
			util.MachineToInfrastructureMapFunc(infrav1.GroupVersion.WithKind(metal3MachineKind)))).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(clusterToMachines)).
		Watches(&bmov1.BareMetalHost{}, r.hostEvents()).
		// A ClusterNetwork's status says which hosts are available and how far their ports are.
		Watches(&netv1.ClusterNetwork{}, handler.EnqueueRequestsFromMapFunc(r.clusterNetworkToMachines)).
		// A deleted machine waits for its Metal3DataClaim to be gone. The claim's status is not
		// waited for: the machine reads its Metal3Data.
		Owns(&infrav1.Metal3DataClaim{}, builder.WithPredicates(predicate.Funcs{
			CreateFunc:  func(event.CreateEvent) bool { return false },
			UpdateFunc:  func(event.UpdateEvent) bool { return false },
			GenericFunc: func(event.GenericEvent) bool { return false },
		})).
		// The machine's Metal3Data rendered (its data is ready: wake the machine then, rather
		// than at the next unrelated event), or found to disagree (or agree again) with the
		// host's switch ports: the machine shows it.
		Watches(&infrav1.Metal3Data{}, handler.EnqueueRequestsFromMapFunc(dataToMachine), builder.WithPredicates(predicate.Funcs{
			CreateFunc: func(event.CreateEvent) bool { return false },
			DeleteFunc: func(event.DeleteEvent) bool { return false },
			UpdateFunc: func(e event.UpdateEvent) bool {
				before, after := e.ObjectOld.(*infrav1.Metal3Data), e.ObjectNew.(*infrav1.Metal3Data)
				return before.Status.Ready != after.Status.Ready || !equality.Semantic.DeepEqual(
					meta.FindStatusCondition(before.Status.Conditions, infrav1.DataHostSwitchMismatchCondition),
					meta.FindStatusCondition(after.Status.Conditions, infrav1.DataHostSwitchMismatchCondition))
			},
		})).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(concurrency, 1)}).
		Named(metal3MachineControllerName).
		Complete(r)
}

// dataToMachine maps a Metal3Data to its machine: its claim is named after the machine.
func dataToMachine(_ context.Context, o client.Object) []reconcile.Request {
	data, ok := o.(*infrav1.Metal3Data)
	if !ok || data.Spec.Claim.Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: data.Namespace, Name: data.Spec.Claim.Name}}}
}
