package fabric

import (
	"context"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// profileAPIServer writes a CPU profile of the API server over seconds to the file named by
// FABRIC_BENCH_APISERVER_PROFILE, if set, in the background: where the server's CPU goes
// while the fabric runs. The returned function waits for it.
func profileAPIServer(ctx context.Context, t *testing.T, seconds string) func() {
	path := os.Getenv("FABRIC_BENCH_APISERVER_PROFILE")
	if path == "" {
		return func() {}
	}
	c := rest.CopyConfig(env.Config)
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
		body, err := rc.Get().AbsPath("/debug/pprof/profile").Param("seconds", seconds).DoRaw(ctx)
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
