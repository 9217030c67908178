package metal3remediation

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/skeleton"
	"github.com/metalwire/metalwire/internal/controller/watchfilter"
	"github.com/metalwire/metalwire/internal/controller/workload"
)

// defaultRecheck is how often a remediation looks again at a host it waits for (power state,
// the Node coming back): BMO and the workload cluster send no event we watch. Upstream's value.
const defaultRecheck = 5 * time.Second

// defaultTimeoutSeconds applies when spec.strategy.timeoutSeconds is unset (upstream's default).
const defaultTimeoutSeconds = 600

// Reconciler owns Metal3Remediation status, the reboot annotation it puts on a host, and the
// Node it deletes and restores.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client   client.Client
	Recorder events.EventRecorder

	// WorkloadClient reaches the workload cluster's API server, where the Machine's Node is.
	WorkloadClient workload.ClientFunc

	// NodeMode says what happens to the Machine's Node while the host is off: deleted, or kept
	// with the out-of-service taint; "" is NodeModeAuto, upstream's choice by the management
	// cluster's Kubernetes version. SetupWithManager decides it once.
	NodeMode NodeMode
	// outOfServiceTaint is the decision: taint the Node rather than delete it.
	outOfServiceTaint bool

	// Recheck is how often to look again while waiting; zero means 5s.
	Recheck time.Duration
	// Now tells the time; nil means time.Now. Tests move it on instead of waiting minutes.
	Now func() time.Time
	// WatchFilter is --watch-filter: with a value, only remediations labelled with it are acted
	// on (MachineHealthCheck copies the labels of the Metal3RemediationTemplate's
	// spec.template.metadata onto the remediations it makes).
	WatchFilter string
}

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3remediations,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3remediations/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3remediationtemplates,verbs=get;list;watch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3machines,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines;machines/status,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=metal3.io,resources=baremetalhosts,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile moves one Metal3Remediation a step on, in the reconcilers' one shape (skeleton). Its
// finalizer is the phases' own: saved when the host is first powered off, removed when the
// remediation is done with it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var machine *clusterv1.Machine
	phase := func(next func(context.Context, *state) (ctrl.Result, error)) skeleton.Phase[*infrav1.Metal3Remediation] {
		return func(ctx context.Context, sc *skeleton.Scope[*infrav1.Metal3Remediation]) (ctrl.Result, error) {
			rem := sc.Object
			if machine == nil {
				if !rem.DeletionTimestamp.IsZero() {
					// The Machine is gone, and with it the host's claim and the Node: nothing to undo.
					controllerutil.RemoveFinalizer(rem, infrav1.RemediationFinalizer)
					return ctrl.Result{}, nil
				}
				// MachineHealthCheck sets the owner reference when it creates the remediation.
				progressing(rem, metav1.ConditionFalse, "WaitingForMachine", "no Machine owns this Metal3Remediation; MachineHealthCheck creates it with one, a hand-made one needs an ownerReference to the Machine to remediate")
				return ctrl.Result{}, nil
			}
			s, err := r.gather(ctx, rem, machine, sc.Cluster)
			if err != nil {
				return ctrl.Result{}, err
			}
			return next(ctx, s)
		}
	}
	return skeleton.Reconcile(ctx, req, skeleton.Kind[*infrav1.Metal3Remediation]{
		Client: r.Client, WatchFilter: r.WatchFilter,
		New: func() *infrav1.Metal3Remediation { return &infrav1.Metal3Remediation{} },
		Cluster: func(ctx context.Context, rem *infrav1.Metal3Remediation) (*clusterv1.Cluster, error) {
			return skeleton.ClusterOfOwnerMachine(ctx, r.Client, "Metal3Remediation", rem.ObjectMeta, &machine)
		},
		PausedCondition: true,
		Normal:          phase(r.reconcileNormal),
		Delete:          phase(r.reconcileDelete),
		OwnedConditions: []string{infrav1.RemediationProgressingCondition},
	})
}

// now is the reconciler's clock.
func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// progressing sets the Progressing condition.
func progressing(rem *infrav1.Metal3Remediation, status metav1.ConditionStatus, reason, message string) {
	conditions.Set(rem, metav1.Condition{
		Type: infrav1.RemediationProgressingCondition, Status: status, Reason: reason, Message: message, ObservedGeneration: rem.Generation,
	})
}

// SetupWithManager watches Metal3Remediations, and Machines for their remediations (a Machine
// whose Node comes back, or that Cluster API starts deleting).
func (r *Reconciler) SetupWithManager(_ context.Context, mgr ctrl.Manager, concurrency int) error {
	if r.Recheck == 0 {
		r.Recheck = defaultRecheck
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("metal3remediation")
	}
	if r.NodeMode == "" {
		r.NodeMode = NodeModeAuto
	}
	taint, serverVersion, err := useOutOfServiceTaint(r.NodeMode, mgr.GetConfig())
	if err != nil {
		return err
	}
	r.outOfServiceTaint = taint
	mode := "delete the Node"
	if taint {
		mode = "taint the Node " + corev1.TaintNodeOutOfService
	}
	mgr.GetLogger().WithName("metal3remediation").Info("while a remediated host is off, remediations "+mode,
		"remediationNodeMode", r.NodeMode, "managementClusterVersion", serverVersion)
	return ctrl.NewControllerManagedBy(mgr).
		For(&infrav1.Metal3Remediation{}, builder.WithPredicates(watchfilter.Predicate(r.WatchFilter))).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(machineToRemediation)).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(concurrency, 1)}).
		Named("metal3remediation").
		Complete(r)
}

// machineToRemediation maps a Machine to the remediation MachineHealthCheck names after it.
func machineToRemediation(_ context.Context, obj client.Object) []ctrl.Request {
	return []ctrl.Request{{NamespacedName: client.ObjectKeyFromObject(obj)}}
}
