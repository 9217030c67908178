package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"
)

const seedFile = "../../pkg/generate/testdata/seed.yaml"

func TestGenerateExitCodes(t *testing.T) {
	bad := writeFile(t, "bad.yaml", "infra:\n  networks:\n    net0: {addresses: [10.0.0.1]}\ncontrollers: {}\n")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no cluster", []string{"generate", "-f", seedFile}, 2, "--cluster is required"},
		{"no file", []string{"generate", "--cluster", "demo"}, 2, "-f is required"},
		{"unknown format", []string{"generate", "-f", seedFile, "--cluster", "demo", "--format", "ifupdown"}, 2, `--format "ifupdown" is not a format`},
		{"no image", []string{"generate", "-f", seedFile, "--cluster", "demo"}, 2, "--image-url and --image-checksum are required"},
		{"unknown flag", []string{"generate", "--nope"}, 2, "unknown flag"},
		{"bad input", []string{"generate", "--templates", "-f", bad, "--cluster", "demo"}, 1, "bad.yaml: infra.networks.net0 has no netmask"},
		{"missing file", []string{"generate", "--templates", "-f", filepath.Join(t.TempDir(), "nope.yaml"), "--cluster", "demo"}, 1, "no such file"},
		{"templates without a version", []string{"generate", "--templates", "-f", seedFile, "--cluster", "demo"}, 1,
			"seed.yaml: controllers: the controllers' KubeadmControlPlane needs a Kubernetes version (spec.version); give --kubernetes-version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			out, code := run(context.Background(), tt.args...)
			g.Expect(code).To(Equal(tt.code), out)
			g.Expect(out).To(ContainSubstring(tt.want))
			g.Expect(strings.Count(strings.TrimSpace(out), "\n")).To(BeZero(), "one line: %s", out)
		})
	}
}

func TestGenerateTemplatesNeedsNoCluster(t *testing.T) {
	g := NewWithT(t)
	out, code := run(context.Background(), "generate", "--templates", "-f", seedFile, "--cluster", "demo", "-n", "metal3", "--kubernetes-version", "v1.34.1", "--kubeconfig", filepath.Join(t.TempDir(), "none"))
	g.Expect(code).To(Equal(0), out)
	g.Expect(out).To(ContainSubstring("kind: IPPool"))
	g.Expect(out).To(ContainSubstring("kind: Metal3DataTemplate"))
	g.Expect(out).To(ContainSubstring("kind: KubeadmControlPlane"))
	g.Expect(out).To(ContainSubstring("kind: KubeadmConfigTemplate"))
}

func TestGenerateHelpAndDocsCoverEveryFlag(t *testing.T) {
	g := NewWithT(t)
	doc, err := os.ReadFile("../../docs/generate.md")
	g.Expect(err).NotTo(HaveOccurred())
	newGenerateCommand().Flags().VisitAll(func(f *pflag.Flag) {
		g.Expect(strings.TrimSpace(f.Usage)).NotTo(BeEmpty(), "flag --%s has no help text", f.Name)
		g.Expect(string(doc)).To(ContainSubstring("`--"+f.Name), "docs/generate.md does not document --%s", f.Name)
	})
}
