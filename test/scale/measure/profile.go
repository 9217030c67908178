package measure

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
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
	done := make(chan struct{})
	go func() {
		defer close(done)
		body, err := rc.Get().AbsPath("/debug/pprof/profile").Param("seconds", strconv.Itoa(seconds)).DoRaw(ctx)
		if err != nil {
			t.Errorf("profiling the API server: %v", err)
			return
		}
		if err := os.WriteFile(path, body, 0o600); err != nil {
			t.Errorf("writing the API server's profile: %v", err)
		}
	}()
	return func() { <-done }
}

// ProfileManager writes a CPU profile of the manager serving pprof at addr (its
// --profiler-address) over seconds to path, in the background, as ProfileAPIServer does for the
// API server. An empty path profiles nothing. The returned function waits for the profile.
func ProfileManager(ctx context.Context, t *testing.T, addr, path string, seconds int) func() {
	if path == "" {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := fetchTo(ctx, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, seconds), path); err != nil {
			t.Errorf("profiling the manager: %v", err)
		}
	}()
	return func() { <-done }
}

// fetchTo writes what a GET of url answers to path.
func fetchTo(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return os.WriteFile(path, body, 0o600)
}
