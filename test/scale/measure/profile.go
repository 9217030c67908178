package measure

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// ProfileAPIServer writes a CPU profile of the API server at cfg over seconds to path, in the
// background: where the server's CPU goes while a benchmark runs. An empty path profiles
// nothing. The returned function waits for the profile.
func ProfileAPIServer(ctx context.Context, t *testing.T, cfg *rest.Config, path string, seconds int) func() {
	if path == "" {
		return func() {}
	}
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &schema.GroupVersion{}
	c.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	c.Timeout = 0
	rc, err := rest.UnversionedRESTClientFor(c)
	if err != nil {
		t.Fatalf("profiling the API server: %v", err)
	}
	return inBackground(t, "profiling the API server", func() error {
		body, err := rc.Get().AbsPath("/debug/pprof/profile").Param("seconds", strconv.Itoa(seconds)).DoRaw(ctx)
		if err != nil {
			return err
		}
		return save(path, body)
	})
}

// ProfileManager writes a CPU profile of the manager serving pprof at addr (its
// --profiler-address) over seconds to path, in the background, as ProfileAPIServer does for the
// API server. An empty path profiles nothing. The returned function waits for the profile.
func ProfileManager(ctx context.Context, t *testing.T, addr, path string, seconds int) func() {
	if path == "" {
		return func() {}
	}
	return inBackground(t, "profiling the manager", func() error {
		body, err := httpGet(ctx, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, seconds))
		if err != nil {
			return err
		}
		return save(path, body)
	})
}

// inBackground runs f in a goroutine, reporting its error as the test's; the returned function
// waits for it.
func inBackground(t *testing.T, what string, f func() error) func() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := f(); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}()
	return func() { <-done }
}

// httpGet is the body a GET of url answers with 200 OK.
func httpGet(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return body, nil
}

// save writes a profile to path. The folder a person names (BENCH_DATA_HEAP_PROFILE=dir) need
// not exist yet: a run of an hour should not end without its profiles for that.
func save(path string, body []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return err
	}
	return os.WriteFile(path, body, 0o600)
}
