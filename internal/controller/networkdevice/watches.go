package networkdevice

import (
	"context"
	"reflect"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/fabricindex"
	"github.com/metalwire/metalwire/internal/controller/mapping"
)

// hostToDevices maps a host to the NetworkDevices of its NIC objects.
func (r *Reconciler) hostToDevices(c client.Reader) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		return mapping.ListedTo(ctx, c, &netv1.NICList{}, "the NIC objects of host "+o.GetName(), func(n client.Object) (client.ObjectKey, bool) {
			nic, ok := n.(*netv1.NIC)
			if !ok {
				return client.ObjectKey{}, false
			}
			return client.ObjectKey{Namespace: n.GetNamespace(), Name: nic.Spec.NetworkDeviceRef}, true
		}, client.InNamespace(o.GetNamespace()), client.MatchingFields{fabricindex.NICByNode: o.GetName()}, client.UnsafeDisableDeepCopy)
	}
}

// allDevices maps any event to every NetworkDevice (an attachment may be named from any
// namespace; there are few devices).
func (r *Reconciler) allDevices(c client.Reader) handler.MapFunc {
	return func(ctx context.Context, _ client.Object) []reconcile.Request {
		return mapping.Listed(ctx, c, &netv1.NetworkDeviceList{}, "every NetworkDevice", nil, client.UnsafeDisableDeepCopy)
	}
}

// attachmentInputsChanged lets through a host's creation, deletion, and the updates that change
// what its attachments ask of its ports: claimed or released (consumerRef), or its
// networkInterfaces. Every other host write (an image, user data, power) starts no pass.
var attachmentInputsChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	old, okOld := e.ObjectOld.(*bmov1.BareMetalHost)
	cur, okNew := e.ObjectNew.(*bmov1.BareMetalHost)
	if !okOld || !okNew {
		return true
	}
	return (old.Spec.ConsumerRef == nil) != (cur.Spec.ConsumerRef == nil) || !reflect.DeepEqual(old.Spec.NetworkInterfaces, cur.Spec.NetworkInterfaces)
}}
