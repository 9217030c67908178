package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// importersOf lists, for the binary built from dir, the packages among its dependencies that
// import each of pkgs.
func importersOf(t *testing.T, dir string, pkgs ...string) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", dir).CombinedOutput()
	NewWithT(t).Expect(err).NotTo(HaveOccurred(), string(out))
	found := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		for _, imp := range fields[1:] {
			if slices.Contains(pkgs, imp) {
				found[imp] = append(found[imp], fields[0])
			}
		}
	}
	for k := range found {
		slices.Sort(found[k])
	}
	return found
}

// TestTestingLinkedOnlyByLibraries: Go's testing package (and its flags) is linked into neither
// the manager's image nor the CLI. Only metalwire-capi, the program dev mode (`metalwire dev`,
// `metalwire demo`) starts to run Cluster API's Machine, MachineDeployment and webhook code,
// links it, and only through Cluster API's own packages: sigs.k8s.io/cluster-api/util/conversion
// (and, through it, apimachinery's apitesting). metalwire's own conversion keeps its data without
// that package (api/infrastructure/v1beta1). The Open vSwitch driver talks OVSDB without libovsdb's
// client package, a file of which imports testing (internal/switchdriver/openvswitch/rpc.go).
//
// A new route (a package of ours importing testing, internal/testenv or util/conversion, or the
// CLI importing Cluster API's controllers again) fails here.
func TestTestingLinkedOnlyByLibraries(t *testing.T) {
	const conversion = "sigs.k8s.io/cluster-api/util/conversion"
	for _, c := range []struct {
		dir     string
		testing []string
	}{
		{dir: "."},
		{dir: "../manager"},
		{dir: "../metalwire-capi", testing: []string{"k8s.io/apimachinery/pkg/api/apitesting", conversion}},
	} {
		found := importersOf(t, c.dir, "fmt", "testing", conversion, "github.com/metalwire/metalwire/internal/testenv")
		g := NewWithT(t)
		g.Expect(found["fmt"]).NotTo(BeEmpty(), "%s: the list is the binary's", c.dir)
		if c.testing == nil {
			g.Expect(found["testing"]).To(BeEmpty(), "%s: the packages importing testing", c.dir)
			g.Expect(found[conversion]).To(BeEmpty(), "%s: the packages importing %s", c.dir, conversion)
		} else {
			g.Expect(found["testing"]).To(Equal(c.testing), "%s: the packages importing testing", c.dir)
		}
		g.Expect(found["github.com/metalwire/metalwire/internal/testenv"]).To(BeEmpty(), "%s: the test control plane's helpers", c.dir)
		for _, p := range found[conversion] {
			g.Expect(p).To(HavePrefix("sigs.k8s.io/cluster-api/"), "%s: %s imports %s", c.dir, p, conversion)
		}
	}
}
