package cacheread

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// controller-runtime's names for what a field index (client.FieldIndexer.IndexField) stores in
// its informer's indexer: the index is "field:<field>", and an object of a namespace is found
// under "<namespace>/<value>" and "__all_namespaces/<value>". They are not exported;
// TestByFieldFindsWhatListFinds fails when they change (ByIndex then names an index that does
// not exist, or finds nothing).
const (
	fieldIndexPrefix = "field:"
	allNamespaces    = "__all_namespaces"
)

// IndexName is the name of field's index in an informer's indexer, as the cache's List with
// client.MatchingFields reads it.
func IndexName(field string) string { return fieldIndexPrefix + field }

// IndexKey is what an object of namespace (or, with "", every object, and a cluster-scoped one)
// with value is found under in a field index, as the cache's List with client.InNamespace and
// client.MatchingFields looks it up.
func IndexKey(namespace, value string) string {
	if namespace == "" {
		return allNamespaces + "/" + value
	}
	return namespace + "/" + value
}

// ByField calls each with every object of obj's kind whose field index field has value, in
// namespace ("" for all namespaces), as the cache holds it: the same objects as
// c.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{field: value}), in no
// particular order, but without List's copy of every object's struct into list.Items (with
// client.UnsafeDisableDeepCopy List still copies the struct, and a claim's is about a
// kilobyte: a pool of thousands of claims read on every reconcile). obj only names the kind.
//
// each must not change the object or anything it points to: it is the cache's own, shared with
// every reader. It may hold it for the rest of a reconcile: the informer replaces an object that
// changes, it does not change it in place, so what is held stays as it was read. Copy what is
// changed.
//
// When the cache's informer of the kind is not one informer over one indexer (a cache limited
// to some namespaces keeps one informer each), it lists through c.List into list, without a
// deep copy, and calls each with list's items, which are list's and may be kept.
func ByField(ctx context.Context, c cache.Cache, obj client.Object, list client.ObjectList, namespace, field, value string, each func(client.Object)) error {
	inf, err := c.GetInformer(ctx, obj)
	if err != nil {
		return err
	}
	shared, ok := inf.(toolscache.SharedIndexInformer)
	if !ok {
		if err := c.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{field: value}, client.UnsafeDisableDeepCopy); err != nil {
			return err
		}
		return meta.EachListItem(list, func(o runtime.Object) error {
			each(o.(client.Object))
			return nil
		})
	}
	items, err := shared.GetIndexer().ByIndex(IndexName(field), IndexKey(namespace, value))
	if err != nil {
		return fmt.Errorf("reading the cache's index %s of %T: %w", field, obj, err)
	}
	for _, item := range items {
		o, ok := item.(client.Object)
		if !ok {
			return fmt.Errorf("the cache's index %s of %T holds a %T", field, obj, item)
		}
		each(o)
	}
	return nil
}
