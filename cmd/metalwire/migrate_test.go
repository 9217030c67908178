package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// runMigrate runs `metalwire migrate` with stdin and returns stdout, stderr and the exit code.
func runMigrate(stdin string, args ...string) (stdout, stderr string, code int) {
	cmd := newRootCommand()
	var out, errOut bytes.Buffer
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(append([]string{"migrate"}, args...))
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		errOut.WriteString("metalwire: " + err.Error() + "\n")
		return out.String(), errOut.String(), exitCode(err)
	}
	return out.String(), errOut.String(), 0
}

const seedFixtures = "../../test/fixtures/seeds"

func TestMigrateRewritesAndExitsZeroWhenNothingIsLeft(t *testing.T) {
	g := NewWithT(t)
	stdout, stderr, code := runMigrate("", "-f", filepath.Join(seedFixtures, "000-02-metal3cluster.yaml"))
	g.Expect(code).To(Equal(0), stderr)
	g.Expect(stdout).To(ContainSubstring("apiVersion: infrastructure.cluster.x-k8s.io/v1beta2"))
	g.Expect(stdout).To(ContainSubstring("cloudProviderEnabled: false"))
	g.Expect(stdout).NotTo(ContainSubstring("noCloudProvider"))
	g.Expect(stderr).To(ContainSubstring("Metal3Cluster/m3cluster: spec.noCloudProvider: true -> cloudProviderEnabled: false\n"))
	g.Expect(stderr).NotTo(ContainSubstring("must change"))
}

func TestMigrateExitsOneAndNamesTheFieldsTheUserMustChange(t *testing.T) {
	g := NewWithT(t)
	stdout, stderr, code := runMigrate("", "-f", filepath.Join(seedFixtures, "000-10-metal3machine.yaml"))
	g.Expect(code).To(Equal(1))
	g.Expect(stdout).To(ContainSubstring("name: controlplane-metadata"), "the migrated YAML is still written")
	g.Expect(stderr).To(ContainSubstring("Metal3Machine/controlplane-0: spec.hostSelector.matchExpressions: map -> list"))
	g.Expect(stderr).To(ContainSubstring("Metal3Machine/controlplane-0: spec.dataTemplate.name: Name -> name"))
	g.Expect(stderr).To(ContainSubstring(`must change: Metal3Machine/controlplane-0: spec.hostSelector.matchExpressions[0].values: written as a YAML set`))
}

func TestMigrateReadsStdinAndWritesTheOutputFile(t *testing.T) {
	g := NewWithT(t)
	out := filepath.Join(t.TempDir(), "new.yaml")
	in := "apiVersion: ipam.metal3.io/v1alpha1\nkind: IPPool\nmetadata: {name: pool-1}\n---\napiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {name: c}\n"
	stdout, stderr, code := runMigrate(in, "-f", "-", "-o", out)
	g.Expect(code).To(Equal(0), stderr)
	g.Expect(stdout).To(BeEmpty())
	written, err := os.ReadFile(out)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(written)).To(Equal("apiVersion: ipam.metal3.io/v1alpha1\nkind: IPPool\nmetadata: {name: pool-1}\nspec:\n  namePrefix: pool-1\n---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata: {name: c}\n"))
	g.Expect(stderr).To(ContainSubstring("migrated 2 documents: 2 changes, 0 to fix by hand"))
}

// A warning is something CAPM3 would need but metalwire does not: it is reported, counted in
// the summary, and does not fail the run.
func TestMigrateReportsWarningsAndStillExitsZero(t *testing.T) {
	g := NewWithT(t)
	in := "apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: Metal3DataTemplate\nmetadata: {name: t}\nspec: {}\n"
	_, stderr, code := runMigrate(in, "-f", "-")
	g.Expect(code).To(Equal(0), stderr)
	g.Expect(stderr).To(ContainSubstring("warning: Metal3DataTemplate/t: spec.clusterName: not set: metalwire does not need it, but CAPM3 v1beta2 requires it"))
	g.Expect(stderr).To(ContainSubstring("migrated 1 document: 1 change, 1 warning, 0 to fix by hand"))
}

func TestMigrateUsageAndInputErrors(t *testing.T) {
	for _, tt := range []struct {
		name     string
		args     []string
		stdin    string
		wantCode int
		wantErr  string
	}{
		{"no -f", nil, "", 2, "-f is required"},
		{"an argument", []string{"old.yaml"}, "", 2, `unexpected argument "old.yaml": give the manifest with -f`},
		{"unknown flag", []string{"--nope"}, "", 2, "unknown flag: --nope"},
		{"missing file", []string{"-f", "does-not-exist.yaml"}, "", 1, "reading the manifest"},
		{"not YAML", []string{"-f", "-"}, "a: [b\n", 1, "-: document 1 is not valid YAML"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			_, stderr, code := runMigrate(tt.stdin, tt.args...)
			g.Expect(code).To(Equal(tt.wantCode), stderr)
			g.Expect(stderr).To(ContainSubstring(tt.wantErr))
		})
	}
}
