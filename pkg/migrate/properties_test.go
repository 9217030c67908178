package migrate_test

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/metalwire/metalwire/pkg/migrate"
)

func seedFixtures(t testing.TB) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "test", "fixtures", "seeds", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no seed fixtures found: %v", err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = b
	}
	return out
}

// Running migrate on its own output changes nothing: a user may run it twice, or on a file
// that mixes old and new manifests.
func TestMigrateIsIdempotentOnTheSeedExamples(t *testing.T) {
	for name, in := range seedFixtures(t) {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			first, err := migrate.Migrate(in)
			if name == "003-01-metal3cluster-fragment.yaml" {
				// The seed's block is prose ("Spec: ... clusterNetwork: CN1 ..."), not YAML.
				g.Expect(err).To(MatchError(ContainSubstring("is not valid YAML")))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			second, err := migrate.Migrate(first.Output())
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(second.Changes()).To(BeEmpty(), "second run over:\n%s", first.Output())
			g.Expect(string(second.Output())).To(Equal(string(first.Output())))
			g.Expect(second.MustChange()).To(HaveLen(len(first.MustChange())), "what needs the user still needs the user")
		})
	}
}

// Migrate never panics, whatever YAML it is given: it either migrates or says why not.
func FuzzMigrate(f *testing.F) {
	for _, in := range seedFixtures(f) {
		f.Add(in)
	}
	f.Add([]byte("kind: Metal3Cluster\napiVersion: infrastructure.cluster.x-k8s.io/v1alpha4\nspec: [1]\n"))
	f.Add([]byte("kind: KubeadmControlPlane\napiVersion: controlplane.cluster.x-k8s.io/v1alpha3\nspec: {nodeDrainTimeout: 5m, machineTemplate: 3}\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		res, err := migrate.Migrate(in)
		if err != nil {
			return
		}
		if _, err := migrate.Migrate(res.Output()); err != nil {
			t.Fatalf("migrate wrote YAML it cannot read back: %v\n%s", err, res.Output())
		}
	})
}
