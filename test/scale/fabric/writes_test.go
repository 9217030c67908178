package fabric

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// writeCounter counts the manager's API writes (every request that is not a read), by method
// and resource, as they leave its client: the design's measure of a controller's cost is its
// writes per host.
type writeCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

func (w *writeCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			w.add(req.Method + " " + resourceOf(req.URL.Path))
		}
		return rt.RoundTrip(req)
	})
}

func (w *writeCounter) add(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.counts == nil {
		w.counts = map[string]int{}
	}
	w.counts[key]++
}

func (w *writeCounter) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.counts = nil
}

// snapshot returns the counts so far.
func (w *writeCounter) snapshot() writeCounts {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := writeCounts{}
	for k, v := range w.counts {
		out[k] = v
	}
	return out
}

type writeCounts map[string]int

func (c writeCounts) total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// String lists the counts by kind of write, largest first: "PATCH nics/status 1000, ...".
func (c writeCounts) String() string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if c[a] != c[b] {
			return c[b] - c[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, c[k]))
	}
	return strings.Join(parts, ", ")
}

// resourceOf reads ".../namespaces/NS/nics/NAME/status" as "nics/status".
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == "namespaces" && i+2 < len(parts) {
			rest := parts[i+2:]
			switch {
			case len(rest) >= 3:
				return rest[0] + "/" + rest[2]
			default:
				return rest[0]
			}
		}
	}
	return path
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
