package metal3machine

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/fieldindex"
	"github.com/metalwire/metalwire/internal/controller/mapping"
)

// Field indexes, so that no reconcile walks every host or every machine of a namespace.
const (
	// hostConsumerIndex keys a BareMetalHost by its consumer, "<Kind>/<name>", or noConsumer.
	hostConsumerIndex = "metalwire.spec.consumerRef"
	noConsumer        = "<none>"

	// waitingForHostIndex keys a Metal3Machine "true" while it has no host and is not deleted.
	waitingForHostIndex = "metalwire.waitingForHost"
)

func consumerKey(host *bmov1.BareMetalHost) string {
	if ref := host.Spec.ConsumerRef; ref != nil {
		return ref.Kind + "/" + ref.Name
	}
	return noConsumer
}

func waitingForHost(m3m *infrav1.Metal3Machine) bool {
	return m3m.Annotations[infrav1.HostAnnotation] == "" && m3m.DeletionTimestamp.IsZero()
}

func setupIndexes(ctx context.Context, mgr ctrl.Manager) error {
	return fieldindex.Register(ctx, mgr.GetFieldIndexer(),
		fieldindex.Index{Object: &bmov1.BareMetalHost{}, Field: hostConsumerIndex, Keys: func(o client.Object) []string {
			return []string{consumerKey(o.(*bmov1.BareMetalHost))}
		}},
		fieldindex.Index{Object: &infrav1.Metal3Machine{}, Field: waitingForHostIndex, Keys: func(o client.Object) []string {
			if waitingForHost(o.(*infrav1.Metal3Machine)) {
				return []string{"true"}
			}
			return nil
		}})
}

// hostToMachines maps a host event to its consumer, or, for a host that is free to claim, to the
// machines of its namespace still waiting for a host.
func (r *Reconciler) hostToMachines(ctx context.Context, o client.Object) []reconcile.Request {
	host, ok := o.(*bmov1.BareMetalHost)
	if !ok {
		return nil
	}
	if ref := host.Spec.ConsumerRef; ref != nil && !reservedFor(host, host.Labels[NodeReuseLabel], ref.Name) {
		if ref.Kind != metal3MachineKind {
			return nil
		}
		ns := ref.Namespace
		if ns == "" {
			ns = host.Namespace
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: ns, Name: ref.Name}}}
	}
	if reuseBlockedBecause(host) != "" {
		return nil
	}
	return mapping.Listed(ctx, r.Client, &infrav1.Metal3MachineList{}, "the Metal3Machines waiting for host "+host.Name, nil,
		client.InNamespace(host.Namespace), client.MatchingFields{waitingForHostIndex: "true"}, client.UnsafeDisableDeepCopy)
}

// hostEvents maps host events through hostToMachines, an update by the host as it is now and by
// the host as it was if it was held (a consumer, or a reservation for node reuse): a host
// released, taken over or claimed from a reservation wakes the machines that had a claim on it.
// A free host's earlier copy is not mapped: that copy of a host just claimed is free, and mapping
// it, as EnqueueRequestsFromMapFunc maps both copies, woke every waiting machine of the
// namespace at every claim of a scale-up (docs/host-choice.md). A resync (the same version
// twice) is mapped as controller-runtime maps it, at low priority.
func (r *Reconciler) hostEvents() handler.EventHandler {
	mapped := handler.EnqueueRequestsFromMapFunc(r.hostToMachines)
	return handler.Funcs{
		CreateFunc:  mapped.Create,
		DeleteFunc:  mapped.Delete,
		GenericFunc: mapped.Generic,
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if e.ObjectOld.GetResourceVersion() == e.ObjectNew.GetResourceVersion() {
				mapped.Update(ctx, e, q)
				return
			}
			mapped.Generic(ctx, event.GenericEvent{Object: e.ObjectNew}, q)
			if old, ok := e.ObjectOld.(*bmov1.BareMetalHost); ok && (old.Spec.ConsumerRef != nil || old.Labels[NodeReuseLabel] != "") {
				mapped.Generic(ctx, event.GenericEvent{Object: old}, q)
			}
		},
	}
}
