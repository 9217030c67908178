package measure

import (
	"strconv"
	"strings"
	"testing"
)

// A benchmark's manager runs under the soft limit the Deployment's manager would set itself:
// 90% of the manager container's limits.memory in config/manager/manager.yaml.
func TestManagerMemoryLimitIsTheDeployments(t *testing.T) {
	t.Setenv(MemoryLimitEnv, "")
	limit, err := DeploymentMemoryLimit()
	if err != nil {
		t.Fatal(err)
	}
	if limit < 128<<20 {
		t.Fatalf("the Deployment limits the manager to %d bytes: read wrong, or too small for any fleet", limit)
	}
	v, describe, err := ManagerMemoryLimit()
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(float64(limit) * 0.9); v != itoa(want) {
		t.Errorf("GOMEMLIMIT for the benchmark's manager = %s, want %d (90%% of the Deployment's %d)", v, want, limit)
	}
	if !strings.Contains(describe, "of the Deployment's memory limit") {
		t.Errorf("the run's description %q does not say where its limit comes from", describe)
	}
	t.Setenv(MemoryLimitEnv, "off")
	if v, _, _ := ManagerMemoryLimit(); v != "off" {
		t.Errorf("with %s=off the manager gets GOMEMLIMIT=%s, want off", MemoryLimitEnv, v)
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
