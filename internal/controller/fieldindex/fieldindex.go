// Package fieldindex registers the field indexes controllers read their caches through, one way
// for all: a controller's own with Register, those several controllers share as a Set that the
// first of them to be set up registers once per manager.
package fieldindex

import (
	"context"
	"fmt"
	"sync"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Index is one field index: Keys are the values Object is found under by Field.
//
// An index is read within a namespace: a List through it names the namespace
// (client.InNamespace), as every List of the manager's controllers does
// (TestEveryIndexedListNamesItsNamespace reads their code). controller-runtime's IndexField
// files each object of a namespace twice, under its namespace and once more for a List across
// all namespaces, and every value an index holds is a set of its own: an index whose values are
// one object's own (a claim's name, a host's) then costs two sets an object, about 500 bytes. A
// namespaced index files it once. AcrossNamespaces keeps the second entry, for an index a List
// without a namespace reads.
type Index struct {
	Object           client.Object
	Field            string
	Keys             client.IndexerFunc
	AcrossNamespaces bool
}

// Register registers indexes with indexer.
func Register(ctx context.Context, indexer client.FieldIndexer, indexes ...Index) error {
	for _, ix := range indexes {
		if err := register(ctx, indexer, ix); err != nil {
			return fmt.Errorf("registering field index %s of %T: %w", ix.Field, ix.Object, err)
		}
	}
	return nil
}

// register adds ix to the informer of its kind under the name and keys the cache's List reads
// (IndexName, IndexKey), or through IndexField when it is read across
// namespaces or indexer is not an informer cache.
func register(ctx context.Context, indexer client.FieldIndexer, ix Index) error {
	informers, ok := indexer.(cache.Informers)
	if ix.AcrossNamespaces || !ok {
		return indexer.IndexField(ctx, ix.Object, ix.Field, ix.Keys)
	}
	informer, err := informers.GetInformer(ctx, ix.Object, cache.BlockUntilSynced(false))
	if err != nil {
		return err
	}
	return informer.AddIndexers(toolscache.Indexers{IndexName(ix.Field): func(obj any) ([]string, error) {
		o, ok := obj.(client.Object)
		if !ok {
			return nil, fmt.Errorf("index %s: object of type %T is not a client.Object", ix.Field, obj)
		}
		values := ix.Keys(o)
		keys := make([]string, len(values))
		for i, v := range values {
			keys[i] = IndexKey(o.GetNamespace(), v)
		}
		return keys, nil
	}})
}

// controller-runtime's names for what a field index (client.FieldIndexer.IndexField) stores in
// its informer's indexer: the index is "field:<field>", and an object of a namespace is found
// under "<namespace>/<value>" and "__all_namespaces/<value>". They are not exported;
// TestANamespacedIndexFilesEachObjectOnce fails when they change (a List through an index
// registered here then finds nothing).
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

// Set is indexes several controllers share. Its zero value with Indexes set is ready to use;
// it is safe for concurrent use.
type Set struct {
	Indexes []Index

	mu   sync.Mutex
	done map[client.FieldIndexer]bool
}

// Setup registers the set's indexes with indexer; calling it again for the same indexer does
// nothing, so every controller that reads them calls it from its own setup.
func (s *Set) Setup(ctx context.Context, indexer client.FieldIndexer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done[indexer] {
		return nil
	}
	if err := Register(ctx, indexer, s.Indexes...); err != nil {
		return err
	}
	if s.done == nil {
		s.done = map[client.FieldIndexer]bool{}
	}
	s.done[indexer] = true
	return nil
}
