// Package cacheread reads an object from the manager's cache without copying it, for a kind
// whose objects are few in a namespace but large: a Metal3DataTemplate's status lists the index
// of every claim it served, so at 5,000 machines each copy is hundreds of kilobytes, and every
// Metal3Data and Metal3DataClaim reconcile that read its template through client.Get copied all of
// it (about a gigabyte of allocation over a 5,000-machine run, growing with the square of the
// machines) to read its spec or learn that it exists.
//
// Shared hands its reader the cache's own object, which it must never change: copy what is
// changed.
package cacheread

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Shared finds the object named key among those list holds in key's namespace, as the cache
// holds it (client.UnsafeDisableDeepCopy: not a copy), and calls read with it; found is false
// when there is none. read must not change the object or anything it points to: it is the
// cache's own, shared with every reader. What it only reads it may keep for the rest of a
// reconcile (the informer replaces an object that changes, it never changes it in place: the
// skeleton's Kind.Copy keeps a pool's allocations so); copy what is changed.
//
// It lists the namespace's objects of the kind, so it suits kinds with few objects in a
// namespace (templates, pools); a kind with one per machine is read with client.Get.
func Shared(ctx context.Context, c client.Reader, list client.ObjectList, key client.ObjectKey, read func(client.Object)) (found bool, err error) {
	if err := c.List(ctx, list, client.InNamespace(key.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return false, err
	}
	err = meta.EachListItem(list, func(o runtime.Object) error {
		if obj, ok := o.(client.Object); ok && !found && obj.GetName() == key.Name {
			found = true
			read(obj)
		}
		return nil
	})
	return found, err
}
