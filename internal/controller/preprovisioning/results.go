package preprovisioning

import (
	"context"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// outcome is how the last reconcile of a host ended, for its template's status.
type outcome struct {
	// Key is the template the host referenced, "<namespace>/<name>" (reference.Key).
	Key string
	// Reason is empty when the host is rendered, else a CamelCase reason for status.errors.
	Reason string
	// Message says what is wrong and what to do.
	Message string
}

// results holds each host's last outcome. Only waiting and failures live here alone: whether a
// host is rendered is read back from its Secret and spec, so a restarted controller, whose
// results are empty until every host has been reconciled again, never reports a rendered host
// as failed or a failed one as rendered.
type results struct {
	mu     sync.Mutex
	byHost map[types.NamespacedName]outcome
	// changed wakes the template reconciler for a template whose hosts' outcomes changed.
	changed chan event.TypedGenericEvent[client.Object]
}

func newResults() *results {
	return &results{
		byHost: map[types.NamespacedName]outcome{},
		// A burst of hosts finishing at once must not block their reconcilers while the
		// template reconciler catches up; the queue behind the channel de-duplicates.
		changed: make(chan event.TypedGenericEvent[client.Object], 1024),
	}
}

// set records a host's outcome and wakes the templates concerned: the one it names now and the
// one it named before, which must drop it.
func (r *results) set(ctx context.Context, host types.NamespacedName, o outcome) {
	r.mu.Lock()
	old, had := r.byHost[host]
	r.byHost[host] = o
	r.mu.Unlock()
	if had && old == o {
		return
	}
	r.notify(ctx, o.Key)
	if had && old.Key != o.Key {
		r.notify(ctx, old.Key)
	}
}

// forget drops a host that no longer references any template.
func (r *results) forget(ctx context.Context, host types.NamespacedName) {
	r.mu.Lock()
	old, had := r.byHost[host]
	delete(r.byHost, host)
	r.mu.Unlock()
	if had {
		r.notify(ctx, old.Key)
	}
}

// get returns a host's last outcome.
func (r *results) get(host types.NamespacedName) (outcome, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o, ok := r.byHost[host]
	return o, ok
}

func (r *results) notify(ctx context.Context, key string) {
	ns, name, ok := strings.Cut(key, "/")
	if !ok || name == "" {
		return
	}
	tmpl := &infrav1.Metal3PreprovisioningDataTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	select {
	case r.changed <- event.TypedGenericEvent[client.Object]{Object: tmpl}:
	case <-ctx.Done():
	}
}
