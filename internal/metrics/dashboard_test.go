package metrics_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/metalwire/metalwire/internal/metrics"
)

// The Grafana dashboard in the repository queries only metrics the manager serves, and shows
// every fabric metric.
func TestFabricDashboardQueriesServedMetrics(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "grafana", "metalwire-fabric.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("the dashboard is not JSON Grafana can load: %v", err)
	}
	if dash.Title == "" || dash.UID == "" || len(dash.Panels) == 0 {
		t.Fatalf("the dashboard needs a title, a uid and panels: %+v", dash)
	}

	// What /metrics serves: controller-runtime's registry holds every collector already.
	served := map[string]bool{}
	fq := regexp.MustCompile(`fqName: "([^"]+)"`)
	for _, c := range metrics.Collectors() {
		var already prometheus.AlreadyRegisteredError
		if err := ctrlmetrics.Registry.Register(c); !errors.As(err, &already) {
			t.Fatalf("a collector of metrics.Collectors is not registered with controller-runtime's registry: %v", err)
		}
		descs := make(chan *prometheus.Desc, 16)
		c.Describe(descs)
		close(descs)
		for d := range descs {
			if m := fq.FindStringSubmatch(d.String()); m != nil {
				served[m[1]] = true
			}
		}
	}

	name := regexp.MustCompile(`metalwire_[a-z_]+`)
	queried := map[string]bool{}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q queries nothing", p.Title)
		}
		for _, target := range p.Targets {
			for _, m := range name.FindAllString(target.Expr, -1) {
				base := m
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					base = strings.TrimSuffix(base, suffix)
				}
				if !served[base] {
					t.Errorf("panel %q queries %s, which the manager does not serve", p.Title, m)
				}
				queried[base] = true
			}
		}
	}
	for n := range served {
		if strings.HasPrefix(n, "metalwire_fabric_") && !queried[n] {
			t.Errorf("the dashboard shows no panel of %s", n)
		}
	}
	if len(queried) == 0 {
		t.Fatal("the dashboard queries no metalwire metric")
	}
}
