package controlplane

import (
	"context"
	"maps"
	"sync"

	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CountModified watches a kind (list) in namespace ns and returns a function giving, per
// object name, how many times it was written after its creation: what a test of "written once"
// counts. The watch ends with the test.
func (e *Env) CountModified(t TB, ns string, list client.ObjectList) func() map[string]int {
	t.Helper()
	wc, err := client.NewWithWatch(e.Config, client.Options{Scheme: e.Scheme})
	if err != nil {
		t.Fatalf("watching %T: %v", list, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := wc.Watch(ctx, list, client.InNamespace(ns))
	if err != nil {
		t.Fatalf("watching %T: %v", list, err)
	}
	t.Cleanup(w.Stop)
	var mu sync.Mutex
	counts := map[string]int{}
	go func() {
		for ev := range w.ResultChan() {
			if o, ok := ev.Object.(client.Object); ok && ev.Type == watch.Modified {
				mu.Lock()
				counts[o.GetName()]++
				mu.Unlock()
			}
		}
	}()
	return func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(counts)
	}
}
