package preprovisioning

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/fieldindex"
	"github.com/metalwire/metalwire/internal/controller/mapping"
	"github.com/metalwire/metalwire/internal/controller/watchfilter"
)

// Controller names, in logs, metrics and as the events' reporting controller.
const (
	HostControllerName     = "preprovisioning-host"
	TemplateControllerName = "preprovisioning-template"
)

// hostTemplateIndex indexes BareMetalHosts by the template their annotation names (or seems to
// mean, when it is wrong), "<namespace>/<name>": a template finds its hosts without listing
// every host.
const hostTemplateIndex = "metalwire.preprovisioning.templateKey"

// SetupWithManager adds both reconcilers and the host index to mgr. concurrency is how many
// hosts are reconciled at once; watchFilter is --watch-filter: with a value, only templates
// labelled with it, and the hosts that name them, are served.
func SetupWithManager(ctx context.Context, mgr ctrl.Manager, concurrency int, watchFilter string) error {
	err := fieldindex.Register(ctx, mgr.GetFieldIndexer(), fieldindex.Index{Object: &bmov1.BareMetalHost{}, Field: hostTemplateIndex, Keys: func(o client.Object) []string {
		ref, ok := referenceOf(o.(*bmov1.BareMetalHost))
		if !ok || ref.Key == "" {
			return nil
		}
		return []string{ref.Key}
	}, AcrossNamespaces: true}) // a template may serve hosts of other namespaces
	if err != nil {
		return err
	}
	res := newResults()
	hosts := &HostReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder(HostControllerName), WatchFilter: watchFilter, results: res}
	err = ctrl.NewControllerManagedBy(mgr).
		Named(HostControllerName).
		For(&bmov1.BareMetalHost{}, builder.WithPredicates(hostPredicate)).
		Watches(&infrav1.Metal3PreprovisioningDataTemplate{}, handler.EnqueueRequestsFromMapFunc(hosts.templateToHosts)).
		Watches(&ipamv1.IPClaim{}, handler.EnqueueRequestsFromMapFunc(labelledToHost), builder.WithPredicates(ours)).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(labelledToHost), builder.WithPredicates(ours)).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(concurrency, 1)}).
		Complete(hosts)
	if err != nil {
		return err
	}
	templates := &TemplateReconciler{Client: mgr.GetClient(), WatchFilter: watchFilter, results: res}
	return ctrl.NewControllerManagedBy(mgr).
		Named(TemplateControllerName).
		For(&infrav1.Metal3PreprovisioningDataTemplate{}, builder.WithPredicates(watchfilter.Predicate(watchFilter))).
		Watches(&bmov1.BareMetalHost{}, handler.EnqueueRequestsFromMapFunc(hostToTemplate), builder.WithPredicates(statusInputChanged)).
		Watches(&ipamv1.IPClaim{}, handler.EnqueueRequestsFromMapFunc(labelledToTemplate), builder.WithPredicates(ours)).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(labelledToTemplate), builder.WithPredicates(ours)).
		WatchesRawSource(source.Channel(res.changed, &handler.EnqueueRequestForObject{})).
		Complete(templates)
}

// hostPredicate passes the events of hosts this controller has or had business with; BMO's
// status writes on every other host are dropped.
var hostPredicate = predicate.Funcs{
	CreateFunc:  func(e event.CreateEvent) bool { return hostNeedsUs(asHost(e.Object)) },
	DeleteFunc:  func(e event.DeleteEvent) bool { return hostNeedsUs(asHost(e.Object)) },
	GenericFunc: func(e event.GenericEvent) bool { return hostNeedsUs(asHost(e.Object)) },
	UpdateFunc: func(e event.UpdateEvent) bool {
		return hostNeedsUs(asHost(e.ObjectOld)) || hostNeedsUs(asHost(e.ObjectNew))
	},
}

func asHost(o client.Object) *bmov1.BareMetalHost {
	h, _ := o.(*bmov1.BareMetalHost)
	return h
}

// statusInputChanged passes the host updates a template's status depends on: the reference and
// the name. BMO's frequent status writes would otherwise each re-read every host of the template.
var statusInputChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := asHost(e.ObjectOld), asHost(e.ObjectNew)
		if o == nil || n == nil {
			return true
		}
		return o.Annotations[bmov1.PreprovisioningNetworkDataReferenceAnnotation] != n.Annotations[bmov1.PreprovisioningNetworkDataReferenceAnnotation] ||
			o.Spec.PreprovisioningNetworkDataName != n.Spec.PreprovisioningNetworkDataName
	},
}

// ours passes objects this controller made: they carry the host label.
var ours = predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[hostLabel] != "" })

// templateToHosts wakes the hosts that reference a template.
func (r *HostReconciler) templateToHosts(ctx context.Context, o client.Object) []reconcile.Request {
	return mapping.Listed(ctx, r.Client, &bmov1.BareMetalHostList{}, "the hosts of template "+o.GetName(), nil,
		client.MatchingFields{hostTemplateIndex: o.GetNamespace() + "/" + o.GetName()})
}

// labelledToHost wakes the host a claim or Secret was made for.
func labelledToHost(_ context.Context, o client.Object) []reconcile.Request {
	host := o.GetLabels()[hostLabel]
	if host == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: host}}}
}

// labelledToTemplate wakes the template a claim or Secret was made for.
func labelledToTemplate(_ context.Context, o client.Object) []reconcile.Request {
	tmpl := o.GetLabels()[templateLabel]
	if tmpl == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: tmpl}}}
}

// hostToTemplate wakes the template a host names (on an update, the one named before too).
func hostToTemplate(_ context.Context, o client.Object) []reconcile.Request {
	ref, ok := referenceOf(o.(*bmov1.BareMetalHost))
	if !ok {
		return nil
	}
	ns, name, found := strings.Cut(ref.Key, "/")
	if !found || name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}
