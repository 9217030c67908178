package measure

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"runtime"
	"sort"
	"strings"

	"github.com/google/pprof/profile"
)

// FreeAddress is a loopback address with a port nothing listens on now, for a child process's
// --profiler-address.
func FreeAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

// HeapProfile reads the heap profile of the process serving pprof at addr (after a garbage
// collection, so it holds what is retained), writes it to path for `go tool pprof`, and
// returns it parsed.
func HeapProfile(ctx context.Context, addr, path string) (*profile.Profile, error) {
	body, err := httpGet(ctx, "http://"+addr+"/debug/pprof/heap?gc=1")
	if err != nil {
		return nil, fmt.Errorf("reading the manager's heap profile: %w", err)
	}
	if err := save(path, body); err != nil {
		return nil, err
	}
	return profile.Parse(bytes.NewReader(body))
}

// heapSites name where retained memory sits by its allocation stack: the first whose frame is
// in the stack wins, so the order goes from the most specific (a work queue's item, an index
// entry) to the most general (anything an informer allocated).
var heapSites = []struct{ site, frame string }{
	{"workqueues", "k8s.io/client-go/util/workqueue."},
	{"workqueues", "sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue."},
	{"indexes (field and label indexes over the caches)", "cache.(*threadSafeMap).updateIndices"},
	{"indexes (field and label indexes over the caches)", "cache.(*storeIndex)."},
	{"REST mappings (namespaced or not, asked at every cache read)", "k8s.io/apimachinery/pkg/api/meta.PriorityRESTMapper"},
	{"REST mappings (namespaced or not, asked at every cache read)", "k8s.io/apimachinery/pkg/api/meta.MultiRESTMapper"},
	{"REST mappings (namespaced or not, asked at every cache read)", "k8s.io/apimachinery/pkg/api/meta.(*DefaultRESTMapper)"},
	{"informer caches: objects decoded (lists and watch events)", "k8s.io/apimachinery/pkg/watch.(*StreamWatcher).receive"},
	{"informer caches: objects decoded (lists and watch events)", "cache.(*Reflector)."},
	{"cache reads: copies of cached objects", "sigs.k8s.io/controller-runtime/pkg/cache/internal.(*CacheReader)."},
	{"event handlers (map functions, predicates)", "sigs.k8s.io/controller-runtime/pkg/handler."},
	{"event handlers (map functions, predicates)", "sigs.k8s.io/controller-runtime/pkg/internal/source."},
	{"informer caches: the stores' maps and delta queues", "k8s.io/client-go/tools/cache."},
	{"API requests (encoding, HTTP/2, TLS buffers)", "k8s.io/client-go/rest."},
	{"API requests (encoding, HTTP/2, TLS buffers)", "net/http."},
	{"API requests (encoding, HTTP/2, TLS buffers)", "golang.org/x/net/http2."},
	{"reconciles: the rest (rendering, comparing, patches)", "reconcileHandler"},
	{"metalwire's own outside reconciles (pools' views)", "github.com/metalwire/metalwire/"},
	{"controller-runtime, the rest", "sigs.k8s.io/controller-runtime/"},
}

// PrintHeap prints where the profiled process's heap sits, by heapSites and by the functions
// that allocated the most, in total and per machine: what is retained at the end (inuse_space:
// caches, indexes) and what was allocated over the process's life (alloc_space: mostly
// transient, the decoding of every watch event and every read; it is what makes the peak
// exceed the retained heap, as the collector lets the heap grow to twice the live before it runs).
func PrintHeap(p *profile.Profile, machines int, top int) {
	inuse, alloc := -1, -1
	for i, st := range p.SampleType {
		switch st.Type {
		case "inuse_space":
			inuse = i
		case "alloc_space":
			alloc = i
		}
	}
	if inuse < 0 || alloc < 0 {
		fmt.Println("  heap profile: no inuse_space or alloc_space samples")
		return
	}
	bySite, allocBySite := map[string]int64{}, map[string]int64{}
	byFunc := map[string]int64{}
	var total, allocTotal int64
	for _, s := range p.Sample {
		var frames []string
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if line.Function != nil {
					frames = append(frames, line.Function.Name)
				}
			}
		}
		site, leaf := "other (start-up: schemes, registries, metrics; the runtime)", "(runtime)"
		for _, name := range frames {
			if !strings.HasPrefix(name, "runtime.") && !strings.HasPrefix(name, "reflect.") {
				leaf = name
				break
			}
		}
	sites:
		for _, h := range heapSites {
			for _, name := range frames {
				if strings.Contains(name, h.frame) {
					site = h.site
					break sites
				}
			}
		}
		total += s.Value[inuse]
		allocTotal += s.Value[alloc]
		bySite[site] += s.Value[inuse]
		allocBySite[site] += s.Value[alloc]
		byFunc[leaf] += s.Value[inuse]
	}
	mib := func(v int64) float64 { return float64(v) / (1 << 20) }
	perMachine := func(v int64) float64 { return float64(v) / 1024 / float64(machines) }
	fmt.Printf("  heap by where it was allocated (pprof samples one allocation per 512 KiB: figures are to about 0.5 MiB):\n")
	fmt.Printf("    %-58s %10s %14s %14s %16s\n", "", "retained", "retained", "allocated", "allocated")
	fmt.Printf("    %-58s %10s %14s %14s %16s\n", "", "MiB", "KiB/machine", "MiB", "KiB/machine")
	for _, k := range sortedByValue(allocBySite, 0) {
		fmt.Printf("    %-58s %10.1f %14.2f %14.1f %16.2f\n", k, mib(bySite[k]), perMachine(bySite[k]), mib(allocBySite[k]), perMachine(allocBySite[k]))
	}
	fmt.Printf("    %-58s %10.1f %14.2f %14.1f %16.2f\n", "total", mib(total), perMachine(total), mib(allocTotal), perMachine(allocTotal))
	fmt.Printf("  retained, by allocating function (top %d):\n", top)
	for _, k := range sortedByValue(byFunc, top) {
		fmt.Printf("    %-90s %8.1f MiB %9.2f KiB/machine\n", k, mib(byFunc[k]), perMachine(byFunc[k]))
	}
}

// sortedByValue are m's keys, the largest value first, at most n of them (0: all).
func sortedByValue(m map[string]int64, n int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
	if n > 0 && len(keys) > n {
		keys = keys[:n]
	}
	return keys
}

// Retained is how many bytes of heap what build returns keeps alive: the live heap after a
// garbage collection with it, less the live heap before it was made. Measured with the
// allocator's own figures, size classes and all, it is what a cache holding the same values
// pays. Allocations by other goroutines meanwhile count too: measure what is large beside them.
func Retained(build func() any) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	if after.HeapAlloc < before.HeapAlloc {
		return 0
	}
	return int64(min(after.HeapAlloc-before.HeapAlloc, 1<<62))
}
