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

// TestTestingLinkedOnlyByLibraries: Go's testing package (and its flags) is not linked into the
// manager's image at all, and into the CLI only by Cluster API's own code:
// sigs.k8s.io/cluster-api/util/conversion (and, through it, apimachinery's apitesting), which
// Cluster API's Machine, MachineDeployment and webhook code imports. The CLI runs those in dev
// mode (`metalwire dev`, `metalwire demo`); metalwire's own conversion keeps its data without that
// package (api/infrastructure/v1beta1). The Open vSwitch driver talks OVSDB without libovsdb's
// client package, a file of which imports testing (internal/switchdriver/openvswitch/rpc.go).
//
// A new route (a package of ours importing testing, internal/testenv or util/conversion) fails
// here.
func TestTestingLinkedOnlyByLibraries(t *testing.T) {
	const conversion = "sigs.k8s.io/cluster-api/util/conversion"
	for _, c := range []struct {
		dir     string
		testing []string
	}{
		{dir: ".", testing: []string{"k8s.io/apimachinery/pkg/api/apitesting", conversion}},
		{dir: "../manager"},
	} {
		found := importersOf(t, c.dir, "fmt", "testing", conversion, "github.com/metalwire/metalwire/internal/testenv")
		g := NewWithT(t)
		g.Expect(found["fmt"]).NotTo(BeEmpty(), "%s: the list is the binary's", c.dir)
		if c.testing == nil {
			g.Expect(found["testing"]).To(BeEmpty(), "%s: the packages importing testing", c.dir)
		} else {
			g.Expect(found["testing"]).To(Equal(c.testing), "%s: the packages importing testing", c.dir)
		}
		g.Expect(found["github.com/metalwire/metalwire/internal/testenv"]).To(BeEmpty(), "%s: the test control plane's helpers", c.dir)
		for _, p := range found[conversion] {
			g.Expect(p).To(HavePrefix("sigs.k8s.io/cluster-api/"), "%s: %s imports %s", c.dir, p, conversion)
		}
	}
}
