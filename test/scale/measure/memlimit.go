package measure

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/internal/memorylimit"
)

// MemoryLimitEnv overrides the soft memory limit a benchmark's manager runs with: a GOMEMLIMIT
// value ("400MiB", "off"). Unset, the manager runs under the limit the Deployment gives it.
const MemoryLimitEnv = "BENCH_GOMEMLIMIT"

// deploymentManifest is the manager's Deployment, whose container memory limit the image's
// manager turns into its soft limit (memorylimit.Ratio of it).
const deploymentManifest = "config/manager/manager.yaml"

// ManagerMemoryLimit is the GOMEMLIMIT a benchmark's manager process gets, so that it runs as
// in the Deployment: memorylimit.Soft of the manager container's limits.memory in
// config/manager/manager.yaml (the cgroup limit a process on this machine does not have), or
// MemoryLimitEnv. It returns the value and a line saying what it is, for the run's output.
func ManagerMemoryLimit() (gomemlimit, describe string, err error) {
	if os.Getenv(ContainerEnv) != "" {
		return "", "", fmt.Errorf("%s runs the manager of make bench-data and bench-growth in a container; this benchmark's runs without one (unset it)", ContainerEnv)
	}
	if v := os.Getenv(MemoryLimitEnv); v != "" {
		return v, fmt.Sprintf("GOMEMLIMIT=%s (%s)", v, MemoryLimitEnv), nil
	}
	limit, err := DeploymentMemoryLimit()
	if err != nil {
		return "", "", err
	}
	soft := memorylimit.Soft(limit)
	return fmt.Sprint(soft), fmt.Sprintf("GOMEMLIMIT=%.0fMiB: %.0f%% of the Deployment's memory limit, %.0fMiB, as the image's manager sets it",
		float64(soft)/(1<<20), 100*memorylimit.Ratio, float64(limit)/(1<<20)), nil
}

// DeploymentMemoryLimit is the memory limit, in bytes, of the manager container in the
// Deployment the project ships.
func DeploymentMemoryLimit() (int64, error) {
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return 0, fmt.Errorf("finding the module root: %w", err)
	}
	path := filepath.Join(strings.TrimSpace(string(root)), deploymentManifest)
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var d appsv1.Deployment
		if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		if d.Kind != "Deployment" {
			continue
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if c.Name == "manager" {
				if q, ok := c.Resources.Limits["memory"]; ok {
					return q.Value(), nil
				}
			}
		}
	}
	return 0, fmt.Errorf("%s: no memory limit on the manager container", path)
}

// LimitMiB writes a GOMEMLIMIT given in bytes as MiB, for a table; other forms ("400MiB",
// "off") as they are.
func LimitMiB(gomemlimit string) string {
	if b, err := strconv.ParseInt(gomemlimit, 10, 64); err == nil {
		return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
	}
	return gomemlimit
}
