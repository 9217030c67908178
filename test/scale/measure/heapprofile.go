package measure

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
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
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/debug/pprof/heap?gc=1", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading the manager's heap profile: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading the manager's heap profile: %s %v", resp.Status, err)
	}
	if err := os.WriteFile(path, body, 0o600); err != nil {
		return nil, err
	}
	return profile.Parse(bytes.NewReader(body))
}

// heapSites name where retained memory sits by its allocation stack: the first whose frame is
// in the stack wins, so the order goes from the most specific (a work queue's item, an index
// entry) to the most general (anything an informer allocated).
var heapSites = []struct{ site, frame string }{
	{"workqueues", "k8s.io/client-go/util/workqueue."},
	{"indexes (field and label indexes over the caches)", "cache.(*threadSafeMap).updateIndices"},
	{"indexes (field and label indexes over the caches)", "cache.(*storeIndex)."},
	{"informer caches: objects decoded (lists and watch events)", "cache.(*Reflector)."},
	{"informer caches: the stores' maps and delta queues", "k8s.io/client-go/tools/cache."},
	{"controller-runtime (reconcile results, event handlers)", "sigs.k8s.io/controller-runtime/"},
	{"metalwire's own (controllers' state, pools' views)", "github.com/metalwire/metalwire/"},
	{"API connections (HTTP/2, TLS buffers)", "net/http."},
	{"API connections (HTTP/2, TLS buffers)", "golang.org/x/net/http2."},
	{"API connections (HTTP/2, TLS buffers)", "crypto/tls."},
}

// PrintHeap prints where the profiled process's retained heap sits, by heapSites and by the
// functions that allocated the most, in total and per machine.
func PrintHeap(p *profile.Profile, machines int, top int) {
	index := -1
	for i, st := range p.SampleType {
		if st.Type == "inuse_space" {
			index = i
		}
	}
	if index < 0 {
		fmt.Println("  heap profile: no inuse_space samples")
		return
	}
	bySite := map[string]int64{}
	byFunc := map[string]int64{}
	var total int64
	for _, s := range p.Sample {
		v := s.Value[index]
		total += v
		var frames []string
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if line.Function != nil {
					frames = append(frames, line.Function.Name)
				}
			}
		}
		site, leaf := "", ""
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
		if site == "" {
			site = "other (start-up: schemes, registries, metrics; the runtime)"
		}
		bySite[site] += v
		if leaf == "" {
			leaf = "(runtime)"
		}
		byFunc[leaf] += v
	}
	kib := func(v int64) string {
		return fmt.Sprintf("%10.1f MiB %9.2f KiB/machine", float64(v)/(1<<20), float64(v)/1024/float64(machines))
	}
	fmt.Printf("  retained heap (inuse_space after GC): %s\n  by where it was allocated:\n", kib(total))
	for _, k := range sortedByValue(bySite, 0) {
		fmt.Printf("    %-58s %s\n", k, kib(bySite[k]))
	}
	fmt.Printf("  by allocating function (top %d):\n", top)
	for _, k := range sortedByValue(byFunc, top) {
		fmt.Printf("    %-90s %s\n", k, kib(byFunc[k]))
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

// Retained is how many bytes of heap what make returns keeps alive: the live heap after a
// garbage collection with it, less the live heap before it was made. Measured with the
// allocator's own figures, size classes and all, it is what a cache holding the same values
// pays. Allocations by other goroutines meanwhile count too: measure what is large beside them.
func Retained(make func() any) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := make()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}
