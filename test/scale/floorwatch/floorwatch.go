// Package floorwatch holds, for a benchmark's floor, the watches a controller holds: what any
// controller that must learn of every write costs the API server and itself.
package floorwatch

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/metalwire/metalwire/internal/controller/cachepolicy"
	"github.com/metalwire/metalwire/internal/testenv"
)

// LikeAController holds, in this process until the returned stop is called, what a
// controller that has to learn of every write of a floor holds: an informer on each of kinds in
// namespace ns, through the manager's own cache transform (cachepolicy). A floor with it is what
// any controller watching those kinds costs on top of the writes themselves: the API server's
// encoding and sending of every write to a watcher, and the watcher's decoding, on the same
// cores; the manager's reconciles and its other informers are not in it. Stop it before the API
// server: open watches hold its shutdown up.
func LikeAController(ctx context.Context, t *testing.T, e *testenv.Env, ns string, kinds ...client.Object) (stop func()) {
	t.Helper()
	c, err := cache.New(e.Config, cache.Options{Scheme: e.Scheme, DefaultNamespaces: map[string]cache.Config{ns: {}},
		DefaultTransform: cachepolicy.Transform()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	for _, obj := range kinds {
		if _, err := c.GetInformer(ctx, obj); err != nil {
			cancel()
			t.Fatal(err)
		}
	}
	stopped := make(chan struct{})
	stop = func() {
		cancel()
		<-stopped
	}
	go func() {
		defer close(stopped)
		_ = c.Start(ctx)
	}()
	if !c.WaitForCacheSync(ctx) {
		stop()
		t.Fatal("the floor's watches did not sync")
	}
	return stop
}
