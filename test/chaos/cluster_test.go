package chaos

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/metalwire/metalwire/internal/testenv"
)

// ns holds every object of a scenario; each scenario has its own control plane.
const ns = "chaos"

// cluster is one scenario's control plane: restartable (etcd's data kept) and audited, so that
// every create of a Secret, a Metal3Data or an IPAddress can be counted afterwards.
type cluster struct {
	env        *testenv.Env
	kubeconfig string
	auditLog   string
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	dir := t.TempDir()
	c := &cluster{kubeconfig: filepath.Join(dir, "kubeconfig"), auditLog: filepath.Join(dir, "audit.log")}
	env, err := testenv.StartWith(testenv.Options{StateDir: filepath.Join(dir, "state"), AuditLog: c.auditLog})
	if err != nil {
		t.Fatal(err)
	}
	c.env = env
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	if err := os.WriteFile(c.kubeconfig, env.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	return c
}
