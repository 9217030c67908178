package measure

import (
	"context"
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
