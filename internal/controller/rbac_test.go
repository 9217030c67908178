package controller

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/metalwire/metalwire/internal/testneeds"
)

// controllerGen is the binary `make generate` uses (Makefile CONTROLLER_GEN).
const controllerGen = "../../bin/controller-gen-v0.23.0"

// The kubebuilder:rbac markers and config/rbac/role.yaml say the same: a marker added without
// `make generate` (or a hand edit of the file) fails here.
func TestRBACMatchesMarkers(t *testing.T) {
	g := NewWithT(t)
	if _, err := os.Stat(controllerGen); err != nil {
		testneeds.Missing(t, "%s is missing (make tools builds it)", controllerGen)
	}
	dir := t.TempDir()
	bin, err := filepath.Abs(controllerGen)
	g.Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(bin, "rbac:roleName=manager-role", "paths=./internal/controller/...", "output:rbac:dir="+dir)
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	want, err := os.ReadFile(filepath.Join(dir, "role.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	got, err := os.ReadFile("../../config/rbac/role.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(got)).To(Equal(string(want)), "config/rbac/role.yaml is not what the markers generate: run make generate")
}
