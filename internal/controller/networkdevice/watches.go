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
)

// hostToDevices maps a host to the NetworkDevices of its NIC objects.
func (r *Reconciler) hostToDevices(c client.Reader) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		nics := &netv1.NICList{}
		if err := c.List(ctx, nics, client.InNamespace(o.GetNamespace()), client.MatchingFields{fabricindex.NICByNode: o.GetName()}, client.UnsafeDisableDeepCopy); err != nil {
			return nil
		}
		out := make([]reconcile.Request, 0, len(nics.Items))
		for _, n := range nics.Items {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: n.Namespace, Name: n.Spec.NetworkDeviceRef}})
		}
		return out
	}
}

// allDevices maps any event to every NetworkDevice (an attachment may be named from any
// namespace; there are few devices).
func (r *Reconciler) allDevices(c client.Reader) handler.MapFunc {
	return func(ctx context.Context, _ client.Object) []reconcile.Request {
		devices := &netv1.NetworkDeviceList{}
		if err := c.List(ctx, devices, client.UnsafeDisableDeepCopy); err != nil {
			return nil
		}
		out := make([]reconcile.Request, 0, len(devices.Items))
		for _, d := range devices.Items {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&d)})
		}
		return out
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
