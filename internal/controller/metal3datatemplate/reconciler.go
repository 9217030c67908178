package metal3datatemplate

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
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
	"github.com/metalwire/metalwire/internal/controller/cachelag"
	"github.com/metalwire/metalwire/internal/controller/dataindex"
	"github.com/metalwire/metalwire/internal/controller/pause"
	"github.com/metalwire/metalwire/internal/controller/skeleton"
	"github.com/metalwire/metalwire/internal/controller/watchfilter"
)

// ReadyCondition on a template is True while it can serve claims; while it is being deleted it
// says which Metal3Data hold it.
const (
	ReadyCondition  = "Ready"
	ReadyReason     = "Ready"
	DeletingReason  = "Deleting"
	maxCreateRounds = 5
)

// Reconciler gives claims their indexes and creates their Metal3Data.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// WatchFilter is --watch-filter: with a value, only templates labelled with it are served,
	// and of their claims only those labelled with it get a Metal3Data.
	WatchFilter string

	// created remembers the Metal3Data this process created (by namespace/name) until the cache
	// shows them, so that a reconcile running before the cache catches up neither gives the
	// claim a second index nor hands the index to another claim.
	created cachelag.Writes[createdData]
}

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3datatemplates,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3datatemplates/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3dataclaims,verbs=get;list;watch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3datas,verbs=get;list;watch;create;delete

// Reconcile hands out indexes for one template, in the reconcilers' one shape (skeleton): the
// finalizer is persisted before any index is handed out.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return skeleton.Reconcile(ctx, req, skeleton.Kind[*infrav1.Metal3DataTemplate]{
		Client: r.Client, WatchFilter: r.WatchFilter,
		New: func() *infrav1.Metal3DataTemplate { return &infrav1.Metal3DataTemplate{} },
		Gone: func(_ context.Context, key types.NamespacedName) (ctrl.Result, error) {
			r.forget(key)
			return ctrl.Result{}, nil
		},
		ClusterName: func(t *infrav1.Metal3DataTemplate) string { return t.Spec.ClusterName },
		Finalizer:   infrav1.DataTemplateFinalizer,
		Normal:      r.reconcileNormal,
		Delete:      r.reconcileDelete,
		// Read from the cache's own list and written by writeTemplate: the status lists an
		// index per claim, which a deep copy and the patch helper's diff cost on every reconcile.
		Write:   r.writeTemplate,
		Copy:    copyTemplate,
		NewList: func() client.ObjectList { return &infrav1.Metal3DataTemplateList{} },
	})
}

// dataOf lists the template's Metal3Data from the cache, through the index.
func (r *Reconciler) dataOf(ctx context.Context, tmpl *infrav1.Metal3DataTemplate) ([]infrav1.Metal3Data, error) {
	list := &infrav1.Metal3DataList{}
	if err := r.Client.List(ctx, list, client.InNamespace(tmpl.Namespace),
		client.MatchingFields{dataindex.DataByTemplate: tmpl.Name}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing the Metal3Data of Metal3DataTemplate %s: %w", tmpl.Name, err)
	}
	return list.Items, nil
}

// reconcileDelete lets the template go once no Metal3Data uses it: their Secrets were rendered
// from it, and a claim being served still needs it to re-create a deleted Secret.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *skeleton.Scope[*infrav1.Metal3DataTemplate]) (ctrl.Result, error) {
	tmpl := s.Object
	data, err := r.dataOf(ctx, tmpl)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(data) > 0 {
		setCondition(tmpl, metav1.ConditionFalse, DeletingReason,
			fmt.Sprintf("waiting for %d Metal3Data to be deleted (their Metal3DataClaims go with their machines), for example %s", len(data), data[0].Name))
		return ctrl.Result{}, nil
	}
	controllerutil.RemoveFinalizer(tmpl, infrav1.DataTemplateFinalizer)
	return ctrl.Result{}, nil
}

func setCondition(tmpl *infrav1.Metal3DataTemplate, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&tmpl.Status.Conditions, metav1.Condition{
		Type: ReadyCondition, Status: status, Reason: reason, Message: message, ObservedGeneration: tmpl.Generation,
	})
}

// SetupWithManager watches the template's claims and Metal3Data. Events that cannot change an
// allocation (anything but creation and deletion) are filtered out, so a template is reconciled once per batch of
// new or deleted claims rather than once per status write.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, concurrency int) error {
	if err := dataindex.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	allocationChanged := predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero()
		},
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&infrav1.Metal3DataTemplate{}, builder.WithPredicates(watchfilter.Predicate(r.WatchFilter))).
		Watches(&infrav1.Metal3DataClaim{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			c := o.(*infrav1.Metal3DataClaim)
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: c.Namespace, Name: c.Spec.Template.Name}}}
		}), builder.WithPredicates(allocationChanged)).
		Watches(&infrav1.Metal3Data{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			d := o.(*infrav1.Metal3Data)
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: d.Namespace, Name: d.Spec.Template.Name}}}
		}), builder.WithPredicates(allocationChanged)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(pause.ClusterToObjects(mgr.GetClient(),
			func() client.ObjectList { return &infrav1.Metal3DataTemplateList{} },
			func(o client.Object) string {
				return pause.ClusterName(o, o.(*infrav1.Metal3DataTemplate).Spec.ClusterName)
			})), pause.Transitions()).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		Named("metal3datatemplate").
		Complete(r)
}
