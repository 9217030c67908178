package metal3machinetemplate

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/fieldindex"
	"github.com/metalwire/metalwire/internal/controller/skeleton"
	"github.com/metalwire/metalwire/internal/controller/watchfilter"
)

// ControllerName names the controller, and its --metal3machinetemplate-concurrency flag.
const ControllerName = "metal3machinetemplate"

// clonedFromIndex indexes Metal3Machines by the Metal3MachineTemplate Cluster API cloned them
// from, so that a template finds its machines without reading every machine of the namespace.
const clonedFromIndex = "metalwire.clonedFromMetal3MachineTemplate"

// templateGroupKind is how Cluster API writes the template's kind in the machine's
// cluster.x-k8s.io/cloned-from-groupkind annotation.
var templateGroupKind = infrav1.GroupVersion.WithKind("Metal3MachineTemplate").GroupKind().String()

// Reconciler pushes a Metal3MachineTemplate's automatedCleaningMode to its Metal3Machines.
type Reconciler struct {
	Client client.Client
	// WatchFilter is --watch-filter: with a value, only templates labelled with it are synced.
	WatchFilter string
}

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3machinetemplates,verbs=get;list;watch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3machines,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch

// Reconcile writes the template's automatedCleaningMode to every machine cloned from it that has
// another, in the reconcilers' one shape (skeleton): a template of a paused cluster, or one being
// deleted, leaves its machines alone. The template itself is not written: the skeleton's patch
// finds nothing changed. A template without a mode leaves its machines alone, as upstream.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return skeleton.Reconcile(ctx, req, skeleton.Kind[*infrav1.Metal3MachineTemplate]{
		Client: r.Client, WatchFilter: r.WatchFilter,
		New:    func() *infrav1.Metal3MachineTemplate { return &infrav1.Metal3MachineTemplate{} },
		Normal: r.reconcileNormal,
	})
}

// reconcileNormal sets the template's mode on the machines that have another.
func (r *Reconciler) reconcileNormal(ctx context.Context, s *skeleton.Scope[*infrav1.Metal3MachineTemplate]) (ctrl.Result, error) {
	tmpl := s.Object
	mode := tmpl.Spec.Template.Spec.AutomatedCleaningMode
	if mode == nil || *mode == "" {
		return ctrl.Result{}, nil
	}
	machines := &infrav1.Metal3MachineList{}
	if err := r.Client.List(ctx, machines, client.InNamespace(tmpl.Namespace), client.MatchingFields{clonedFromIndex: tmpl.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the Metal3Machines cloned from Metal3MachineTemplate %s: %w", tmpl.Name, err)
	}
	var errs []error
	for i := range machines.Items {
		m3m := &machines.Items[i]
		if m3m.Spec.AutomatedCleaningMode != nil && *m3m.Spec.AutomatedCleaningMode == *mode || !m3m.DeletionTimestamp.IsZero() {
			continue
		}
		orig := m3m.DeepCopy()
		m3m.Spec.AutomatedCleaningMode = mode
		if err := r.Client.Patch(ctx, m3m, client.MergeFrom(orig)); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("setting spec.automatedCleaningMode of Metal3Machine %s to %s: %w", m3m.Name, *mode, err))
			continue
		}
		ctrl.LoggerFrom(ctx).Info("synced automatedCleaningMode from the template", "metal3machine", m3m.Name, "automatedCleaningMode", *mode)
	}
	return ctrl.Result{}, errors.Join(errs...)
}

// clonedFrom is the template a machine was cloned from, or "".
func clonedFrom(o client.Object) string {
	a := o.GetAnnotations()
	if a[clusterv1.TemplateClonedFromGroupKindAnnotation] != templateGroupKind {
		return ""
	}
	return a[clusterv1.TemplateClonedFromNameAnnotation]
}

// SetupWithManager indexes machines by template and watches templates and machines: a machine
// created, or edited by hand, is brought back to its template's mode.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, concurrency int) error {
	err := fieldindex.Register(ctx, mgr.GetFieldIndexer(), fieldindex.Index{Object: &infrav1.Metal3Machine{}, Field: clonedFromIndex, Keys: func(o client.Object) []string {
		if name := clonedFrom(o); name != "" {
			return []string{name}
		}
		return nil
	}})
	if err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&infrav1.Metal3MachineTemplate{}, builder.WithPredicates(watchfilter.Predicate(r.WatchFilter))).
		Watches(&infrav1.Metal3Machine{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if name := clonedFrom(o); name != "" {
				return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}}}
			}
			return nil
		})).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(concurrency, 1)}).
		Named(ControllerName).
		Complete(r)
}
