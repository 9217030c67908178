package main

import (
	"maps"
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

// TestTestingLinkedOnlyByLibraries: Go's testing package (and its flags) is linked into the
// binaries only by libraries metalwire cannot do without, never by a package of metalwire's:
//   - github.com/ovn-org/libovsdb/client, the Open vSwitch driver's OVSDB library: a file of its
//     package (a model for its own tests) imports testing, in every version the Go module proxy
//     serves here (v0.7.0; it lists no newer one);
//   - sigs.k8s.io/cluster-api/util/conversion (and, through it, apimachinery's apitesting), which
//     Cluster API's own Machine, MachineDeployment and webhook code imports: the CLI runs those in
//     dev mode (`metalwire dev`, `metalwire demo`). The image's manager does not link them, and
//     metalwire's own conversion keeps its data without that package (api/infrastructure/v1beta1).
//
// A new route (a package of ours importing testing, internal/testenv or util/conversion) fails
// here.
func TestTestingLinkedOnlyByLibraries(t *testing.T) {
	const conversion = "sigs.k8s.io/cluster-api/util/conversion"
	for _, c := range []struct {
		dir     string
		testing []string
	}{
		{dir: ".", testing: []string{"github.com/ovn-org/libovsdb/client", "k8s.io/apimachinery/pkg/api/apitesting", conversion}},
		{dir: "../manager", testing: []string{"github.com/ovn-org/libovsdb/client"}},
	} {
		found := importersOf(t, c.dir, "testing", conversion, "github.com/metalwire/metalwire/internal/testenv")
		g := NewWithT(t)
		g.Expect(found["testing"]).To(Equal(c.testing), "%s: the packages importing testing", c.dir)
		g.Expect(found["github.com/metalwire/metalwire/internal/testenv"]).To(BeEmpty(), "%s: the test control plane's helpers", c.dir)
		for _, p := range found[conversion] {
			g.Expect(p).To(HavePrefix("sigs.k8s.io/cluster-api/"), "%s: %s imports %s", c.dir, p, conversion)
		}
		g.Expect(slices.Collect(maps.Keys(found))).NotTo(BeEmpty(), "the list is the binary's")
	}
}
