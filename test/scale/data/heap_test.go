package data

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/metalwire/metalwire/internal/controller"
	"github.com/metalwire/metalwire/internal/controller/cachepolicy"
	"github.com/metalwire/metalwire/internal/testenv"
	"github.com/metalwire/metalwire/test/scale/measure"
)

// heapProfileEnv names a directory: with it set, each manager run serves pprof, and at the end of
// the run (everything served, the quiet period over) its heap profile is written there as
// data-<machines>-<limits>.pb.gz and summarised: where the retained bytes were allocated, and
// what the objects of each kind the manager caches weigh.
const heapProfileEnv = "BENCH_DATA_HEAP_PROFILE"

// printManagerHeap writes and summarises the manager's heap profile (profilerAddr) and the
// footprint of what its caches hold, kind by kind, per machine.
func printManagerHeap(ctx context.Context, t *testing.T, e *testenv.Env, ns, profilerAddr, dir string, n int, limits string) {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("data-%d-%s.pb.gz", n, limits))
	p, err := measure.HeapProfile(ctx, profilerAddr, path)
	if err != nil {
		t.Errorf("heap profile: %v", err)
		return
	}
	fmt.Printf("\n  manager heap, %d machines, %s limits (%s; go tool pprof -sample_index=inuse_space %s):\n", n, limits, path, path)
	measure.PrintHeap(p, n, 15)
	printCacheByKind(ctx, t, e, ns, n)
}

// printCacheByKind prints, for every kind whose informer the benchmark's controller groups
// make, how many objects the namespace holds and the heap they take once decoded and transformed
// (cachepolicy.Transform) as the manager's cache keeps them (measure.Retained over a list of them):
// the informer caches' share of the manager's memory, kind by kind.
func printCacheByKind(ctx context.Context, t *testing.T, e *testenv.Env, ns string, n int) {
	t.Helper()
	groups, err := controller.ParseGroups(strings.Split(strings.TrimPrefix(managedGroups, "--controllers="), ","))
	if err != nil {
		t.Fatal(err)
	}
	byObject := cachepolicy.ByObject()
	transform := cachepolicy.Transform()
	fmt.Printf("  the caches' objects by kind (decoded and transformed as the manager's cache keeps them):\n")
	fmt.Printf("    %-40s %8s %12s %14s\n", "kind", "objects", "KiB/object", "KiB/machine")
	var total int64
	for _, obj := range controller.Informers(groups) {
		gvk, err := apiutil.GVKForObject(obj, e.Scheme)
		if err != nil {
			t.Fatal(err)
		}
		opts := []client.ListOption{client.InNamespace(ns)}
		for o, by := range byObject {
			if fmt.Sprintf("%T", o) == fmt.Sprintf("%T", obj) && by.Label != nil {
				opts = append(opts, client.MatchingLabelsSelector{Selector: by.Label})
			}
		}
		count := 0
		var listErr error
		bytes := measure.Retained(func() any {
			gvk.Kind += "List"
			l, err := e.Scheme.New(gvk)
			if err != nil {
				listErr = err
				return nil
			}
			list := l.(client.ObjectList)
			if listErr = e.Client.List(ctx, list, opts...); listErr != nil {
				return nil
			}
			listErr = meta.EachListItem(list, func(o runtime.Object) error {
				count++
				_, err := transform(o)
				return err
			})
			return list
		})
		gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
		if listErr != nil {
			t.Errorf("listing %s: %v", gvk.Kind, listErr)
			continue
		}
		if count == 0 {
			continue
		}
		total += bytes
		fmt.Printf("    %-40s %8d %12.2f %14.2f\n", gvk.GroupKind(), count, float64(bytes)/1024/float64(count), float64(bytes)/1024/float64(n))
	}
	fmt.Printf("    %-40s %8s %12s %14.2f\n", "all cached objects", "", "", float64(total)/1024/float64(n))
}
