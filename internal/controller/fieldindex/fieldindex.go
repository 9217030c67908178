// Package fieldindex registers the field indexes controllers read their caches through, one way
// for all: a controller's own with Register, those several controllers share as a Set that the
// first of them to be set up registers once per manager.
package fieldindex

import (
	"context"
	"fmt"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Index is one field index: Keys are the values Object is found under by Field.
type Index struct {
	Object client.Object
	Field  string
	Keys   client.IndexerFunc
}

// Register registers indexes with indexer.
func Register(ctx context.Context, indexer client.FieldIndexer, indexes ...Index) error {
	for _, ix := range indexes {
		if err := indexer.IndexField(ctx, ix.Object, ix.Field, ix.Keys); err != nil {
			return fmt.Errorf("registering field index %s of %T: %w", ix.Field, ix.Object, err)
		}
	}
	return nil
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
