package metal3dataclaim

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	"github.com/metalwire/metalwire/internal/controller/dataindex"
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

	// served is when a claim of each namespace last got its rendered data: a wait is held while
	// others do (waits.Progress).
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
		// A Metal3Data of an earlier claim of the same name (deleted, then re-created) is not
		// this claim's: it is on its way out.
		if owner := metav1.GetControllerOf(&d); owner != nil && owner.UID != claim.UID {
			continue
		}
		out = append(out, d)
	}
	return out, nil
}

// reconcileNormal reports the claim's Metal3Data. In a scale-up the one status write is the
// outcome: renderedData and Ready. Waits of a new claim are written only once they last
// (waits.Unwritten); errors at once.
func (r *Reconciler) reconcileNormal(ctx context.Context, s *skeleton.Scope[*infrav1.Metal3DataClaim]) (ctrl.Result, error) {
	claim := s.Object
	data, err := r.dataOf(ctx, claim)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(data) == 0 {
		tmpl := &infrav1.Metal3DataTemplate{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: claim.Namespace, Name: claim.Spec.Template.Name}, tmpl)
		switch {
		case apierrors.IsNotFound(err):
			claim.Status.RenderedData = nil
			fail(claim, infrav1.DataClaimTemplateNotFoundReason, fmt.Sprintf(
				"spec.template: Metal3DataTemplate %s not found in namespace %s; create it (the claim gets an index as soon as it exists)", claim.Spec.Template.Name, claim.Namespace))
			return ctrl.Result{}, nil
		case err != nil:
			return ctrl.Result{}, err
		}
		return r.wait(claim, nil, infrav1.DataClaimWaitingForIndexReason, fmt.Sprintf("waiting for an index in Metal3DataTemplate %s", tmpl.Name)), nil
	}
	d := &data[0]
	ref := &corev1.ObjectReference{
		APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3Data", Name: d.Name, Namespace: d.Namespace, UID: d.UID,
	}
	if d.Status.Ready {
		if !meta.IsStatusConditionTrue(claim.Status.Conditions, infrav1.DataClaimReadyCondition) {
			r.served.Served(claim.Namespace, time.Now())
		}
		claim.Status.RenderedData = ref
		claim.Status.ErrorMessage = nil
		setCondition(claim, metav1.ConditionTrue, infrav1.DataClaimDataReadyReason, "")
		return ctrl.Result{}, nil
	}
	if d.Status.ErrorMessage != nil {
		claim.Status.RenderedData = ref
		fail(claim, infrav1.DataClaimWaitingForDataReason, fmt.Sprintf("Metal3Data %s: %s", d.Name, *d.Status.ErrorMessage))
		return ctrl.Result{}, nil
	}
	// A wait is told without details (the Metal3Data's conditions have them): the details
	// change as the rendering progresses, and each change would be a write here.
	return r.wait(claim, ref, infrav1.DataClaimWaitingForDataReason,
		fmt.Sprintf("waiting for Metal3Data %s to be rendered; its conditions say what it waits for", d.Name)), nil
}

// wait reports a wait, unless the claim is new and has said nothing yet: then it is written only
// if it lasts, and the claim is looked at again when it would be.
func (r *Reconciler) wait(claim *infrav1.Metal3DataClaim, ref *corev1.ObjectReference, reason, message string) ctrl.Result {
	reported := meta.FindStatusCondition(claim.Status.Conditions, infrav1.DataClaimReadyCondition) != nil
	if after := waits.Unwritten(claim.CreationTimestamp.Time, r.served.LastServed(claim.Namespace), reported, r.QuietWaits, time.Now()); after > 0 {
		return ctrl.Result{RequeueAfter: after}
	}
	claim.Status.RenderedData = ref
	waitWith(claim, reason, message)
	return ctrl.Result{}
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

func setCondition(claim *infrav1.Metal3DataClaim, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&claim.Status.Conditions, metav1.Condition{
		Type: infrav1.DataClaimReadyCondition, Status: status, Reason: reason, Message: message, ObservedGeneration: claim.Generation,
	})
}

func waitWith(claim *infrav1.Metal3DataClaim, reason, message string) {
	claim.Status.ErrorMessage = nil
	setCondition(claim, metav1.ConditionFalse, reason, message)
}

func fail(claim *infrav1.Metal3DataClaim, reason, message string) {
	claim.Status.ErrorMessage = &message
	setCondition(claim, metav1.ConditionFalse, reason, message)
}

// SetupWithManager watches the claim's Metal3Data (it owns them) and templates, so a claim
// waiting for a template applied late is served as soon as it appears.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, concurrency int) error {
	if err := dataindex.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&infrav1.Metal3DataClaim{}, builder.WithPredicates(watchfilter.Predicate(r.WatchFilter))).
		Owns(&infrav1.Metal3Data{}, builder.WithPredicates(dataOutcomeChanged)).
		Watches(&infrav1.Metal3DataTemplate{}, handler.EnqueueRequestsFromMapFunc(r.templateToClaims)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(pause.ClusterToObjects(mgr.GetClient(),
			func() client.ObjectList { return &infrav1.Metal3DataClaimList{} },
			func(o client.Object) string { return pause.ClusterName(o) })), pause.Transitions()).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		Named("metal3dataclaim").
		Complete(r)
}

// dataOutcomeChanged passes the Metal3Data events a claim's status depends on: creation,
// deletion, and a change of readiness or error. Progress in between is not the claim's to show.
var dataOutcomeChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		before, ok1 := e.ObjectOld.(*infrav1.Metal3Data)
		after, ok2 := e.ObjectNew.(*infrav1.Metal3Data)
		if !ok1 || !ok2 {
			return true
		}
		return before.Status.Ready != after.Status.Ready ||
			!equality.Semantic.DeepEqual(before.Status.ErrorMessage, after.Status.ErrorMessage) ||
			before.DeletionTimestamp.IsZero() != after.DeletionTimestamp.IsZero()
	},
}

// templateToClaims maps a template to its claims that have no Metal3Data yet.
func (r *Reconciler) templateToClaims(ctx context.Context, o client.Object) []reconcile.Request {
	list := &infrav1.Metal3DataClaimList{}
	if err := r.Client.List(ctx, list, client.InNamespace(o.GetNamespace()),
		client.MatchingFields{dataindex.ClaimByTemplate: o.GetName()}, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the claims of a template", "template", o.GetName())
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		if list.Items[i].Status.RenderedData == nil {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return reqs
}
