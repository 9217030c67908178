// Package mapping turns the objects a watch event leads to into reconcile requests, one way for
// every controller's map functions.
package mapping

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Listed lists into list with opts (from the cache) and returns a request for each object
// listed, those keep passes (nil: all). A list that fails maps the event to nothing and is
// logged, what saying what was being listed: a map function has no error to return, and the
// next event or resync brings the objects back.
func Listed(ctx context.Context, c client.Reader, list client.ObjectList, what string, keep func(client.Object) bool, opts ...client.ListOption) []reconcile.Request {
	return ListedTo(ctx, c, list, what, func(o client.Object) (client.ObjectKey, bool) {
		return client.ObjectKeyFromObject(o), keep == nil || keep(o)
	}, opts...)
}

// ListedTo is Listed for objects that name the one to reconcile (a NIC its NetworkDevice): to
// gives, for each object listed, the key of the object to reconcile, or false for none.
func ListedTo(ctx context.Context, c client.Reader, list client.ObjectList, what string, to func(client.Object) (client.ObjectKey, bool), opts ...client.ListOption) []reconcile.Request {
	// The cache's own objects, not copies: a map function reads each only for its key, and
	// copying every listed object (a template's claims, a pool's peers) on every event grows
	// with the square of the objects.
	if err := c.List(ctx, list, append(slices.Clip(opts), client.UnsafeDisableDeepCopy)...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing "+what)
		return nil
	}
	reqs := make([]reconcile.Request, 0, meta.LenList(list))
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		if obj, ok := o.(client.Object); ok {
			if key, ok := to(obj); ok {
				reqs = append(reqs, reconcile.Request{NamespacedName: key})
			}
		}
		return nil
	})
	return reqs
}
