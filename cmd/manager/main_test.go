package main

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// The image runs this binary: it must carry the controllers only, not the dev control plane,
// the host simulator, envtest or Cluster API's own controllers.
func TestManagerCarriesControllersOnly(t *testing.T) {
	g := NewWithT(t)
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	deps := strings.Fields(string(out))
	g.Expect(deps).To(ContainElement("github.com/metalwire/metalwire/internal/controller"), "the list is the manager's")
	forbidden := regexp.MustCompile(`internal/(devenv|simulator|testenv)|envtest|sigs\.k8s\.io/cluster-api/(internal|controllers|exp)(/|$)`)
	// Cluster API's ClusterCache (workload-cluster clients) lives under controllers/ but is a
	// library every provider uses, not one of Cluster API's own reconcilers.
	allowed := regexp.MustCompile(`sigs\.k8s\.io/cluster-api/controllers/(clustercache|remote)$`)
	var found []string
	for _, d := range deps {
		if forbidden.MatchString(d) && !allowed.MatchString(d) {
			found = append(found, d)
		}
	}
	g.Expect(found).To(BeEmpty())
}

func TestManagerRefusesUnknownFlagAndGroup(t *testing.T) {
	g := NewWithT(t)
	g.Expect(run([]string{"--no-such-flag"})).To(Equal(2))
	g.Expect(run([]string{"--controllers=switches"})).To(Equal(2))
	g.Expect(run([]string{"--help"})).To(Equal(0))
}
