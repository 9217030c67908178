package metal3dataclaim

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
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
	"github.com/metalwire/metalwire/internal/controller/cacheread"
	"github.com/metalwire/metalwire/internal/controller/dataindex"
	"github.com/metalwire/metalwire/internal/controller/mapping"
	"github.com/metalwire/metalwire/internal/controller/pause"
	"github.com/metalwire/metalwire/internal/controller/skeleton"
	"github.com/metalwire/metalwire/internal/controller/waits"
	"github.com/metalwire/metalwire/internal/controller/watchfilter"
)

// Reconciler owns Metal3DataClaim status.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// WatchFilter is --watch-filter: with a value, only claims labelled with it are served.
	WatchFilter string
	// QuietWaits is how long a new claim's wait stays unwritten (waits.Unwritten): zero means
	// waits.DefaultQuiet, negative writes every wait at once.
	QuietWaits time.Duration

	// Progress is when a Metal3Data of each namespace was last rendered, shared with the
	// Metal3Data controller that records it: a claim's wait for an index is held while others
	// are served (waits.Progress). Nil: a progress of its own, which nothing records.
	Progress *waits.Progress

	served waits.Progress
}

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3dataclaims,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3dataclaims/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3datas,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3datatemplates,verbs=get;list;watch

// Reconcile reports one claim's state, or releases it, in the reconcilers' one shape (skeleton).
// No finalizer: the claim's Metal3Data is deleted with it, by the template controller (a
// Metal3Data whose claim is gone) and, in a cluster, by the garbage collector through its owner
// reference; the Metal3Data's own finalizer releases the addresses and Secrets.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return skeleton.Reconcile(ctx, req, skeleton.Kind[*infrav1.Metal3DataClaim]{
		Client: r.Client, WatchFilter: r.WatchFilter,
		New:    func() *infrav1.Metal3DataClaim { return &infrav1.Metal3DataClaim{} },
		Normal: r.reconcileNormal,
		Delete: r.reconcileDelete,
	})
}

// dataOf lists the Metal3Data serving the claim: normally one, none before an index is given.
func (r *Reconciler) dataOf(ctx context.Context, claim *infrav1.Metal3DataClaim) ([]infrav1.Metal3Data, error) {
	list := &infrav1.Metal3DataList{}
	if err := r.Client.List(ctx, list, client.InNamespace(claim.Namespace), client.MatchingFields{dataindex.DataByClaim: claim.Name}); err != nil {
		return nil, fmt.Errorf("listing the Metal3Data of Metal3DataClaim %s: %w", claim.Name, err)
	}
	out := list.Items[:0]
	for _, d := range list.Items {
		if Ours(claim, &d) {
			out = append(out, d)
		}
	}
	return out, nil
}

// reconcileNormal reports what keeps a claim from having a Metal3Data: its template is missing,
// or it waits for an index. Once a Metal3Data serves the claim, that Metal3Data's controller
// fills the claim's status (Report) where it renders: nothing is relayed here. A new claim's
// wait is written only once it lasts (waits.Unwritten); a missing template at once.
func (r *Reconciler) reconcileNormal(ctx context.Context, s *skeleton.Scope[*infrav1.Metal3DataClaim]) (ctrl.Result, error) {
	claim := s.Object
	data, err := r.dataOf(ctx, claim)
	if err != nil || len(data) > 0 {
		return ctrl.Result{}, err
	}
	// Only whether the template exists: read without copying it (its status lists every index).
	found, err := cacheread.Shared(ctx, r.Client, &infrav1.Metal3DataTemplateList{},
		client.ObjectKey{Namespace: claim.Namespace, Name: claim.Spec.Template.Name}, func(client.Object) {})
	switch {
	case err == nil && !found:
		claim.Status.RenderedData = nil
		fail(claim, infrav1.DataClaimTemplateNotFoundReason, fmt.Sprintf(
			"spec.template: Metal3DataTemplate %s not found in namespace %s; create it (the claim gets an index as soon as it exists)", claim.Spec.Template.Name, claim.Namespace))
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("reading Metal3DataTemplate %s of Metal3DataClaim %s: %w", claim.Spec.Template.Name, claim.Name, err)
	}
	reported := meta.FindStatusCondition(claim.Status.Conditions, infrav1.DataClaimReadyCondition) != nil
	if after := waits.Unwritten(claim.CreationTimestamp.Time, r.progress().LastServed(claim.Namespace), reported, r.QuietWaits, time.Now()); after > 0 {
		return ctrl.Result{RequeueAfter: after}, nil
	}
	claim.Status.RenderedData = nil
	waitWith(claim, infrav1.DataClaimWaitingForIndexReason, fmt.Sprintf("waiting for an index in Metal3DataTemplate %s", claim.Spec.Template.Name))
	return ctrl.Result{}, nil
}

// progress is the namespaces' progress the claim's waits are held by.
func (r *Reconciler) progress() *waits.Progress {
	if r.Progress != nil {
		return r.Progress
	}
	return &r.served
}

// reconcileDelete deletes the claim's Metal3Data; their own finalizer releases the addresses and
// Secrets. A claim made by an earlier version (or CAPM3) still carries the claim finalizer,
// which is removed once its Metal3Data are gone.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *skeleton.Scope[*infrav1.Metal3DataClaim]) (ctrl.Result, error) {
	claim := s.Object
	data, err := r.dataOf(ctx, claim)
	if err != nil {
		return ctrl.Result{}, err
	}
	for i := range data {
		if data[i].DeletionTimestamp.IsZero() {
			if err := r.Client.Delete(ctx, &data[i]); err != nil && !apierrors.IsNotFound(err) {
				return ctrl.Result{}, fmt.Errorf("deleting Metal3Data %s: %w", data[i].Name, err)
			}
		}
	}
	if !controllerutil.ContainsFinalizer(claim, infrav1.DataClaimFinalizer) {
		return ctrl.Result{}, nil
	}
	if len(data) == 0 {
		controllerutil.RemoveFinalizer(claim, infrav1.DataClaimFinalizer)
		return ctrl.Result{}, nil
	}
	waitWith(claim, infrav1.DataClaimDeletingReason, fmt.Sprintf("waiting for Metal3Data %s to release its addresses and Secrets", data[0].Name))
	return ctrl.Result{}, nil
}

// SetupWithManager watches the claim's Metal3Data going (it owns them: a claim being deleted
// waits for them) and templates, so a claim waiting for a template applied late is served as
// soon as it appears.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, concurrency int) error {
	if err := dataindex.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&infrav1.Metal3DataClaim{}, builder.WithPredicates(watchfilter.Predicate(r.WatchFilter))).
		Owns(&infrav1.Metal3Data{}, builder.WithPredicates(dataGone)).
		Watches(&infrav1.Metal3DataTemplate{}, handler.EnqueueRequestsFromMapFunc(r.templateToClaims)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(pause.ClusterToObjects(mgr.GetClient(),
			func() client.ObjectList { return &infrav1.Metal3DataClaimList{} },
			func(o client.Object) string { return pause.ClusterName(o) })), pause.Transitions()).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		Named("metal3dataclaim").
		Complete(r)
}

// dataGone passes the deletion of a claim's Metal3Data: a claim being deleted waits for it, and
// a claim left without one reports why. Its outcome is the Metal3Data controller's to report.
var dataGone = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	UpdateFunc:  func(event.UpdateEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// templateToClaims maps a template to its claims that have no Metal3Data yet.
func (r *Reconciler) templateToClaims(ctx context.Context, o client.Object) []reconcile.Request {
	return mapping.Listed(ctx, r.Client, &infrav1.Metal3DataClaimList{}, "the claims of Metal3DataTemplate "+o.GetName(),
		func(c client.Object) bool { return c.(*infrav1.Metal3DataClaim).Status.RenderedData == nil },
		client.InNamespace(o.GetNamespace()), client.MatchingFields{dataindex.ClaimByTemplate: o.GetName()}, client.UnsafeDisableDeepCopy)
}
