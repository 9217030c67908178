package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	"github.com/metalwire/metalwire/internal/scheme"
)

func TestDevRunsUntilCancelledWithHostsReachingAvailable(t *testing.T) {
	g := NewWithT(t)
	dir := filepath.Join(t.TempDir(), "dev")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	type result struct {
		out  string
		code int
	}
	done := make(chan result, 1)
	go func() {
		out, code := run(ctx, "dev", "--hosts", "2", "--dir", dir, "--no-build",
			"--registering-delay=100ms", "--inspecting-delay=100ms")
		done <- result{out, code}
	}()

	kubeconfig := filepath.Join(dir, "kubeconfig")
	g.Eventually(func(g Gomega) {
		g.Expect(kubeconfig).To(BeAnExistingFile())
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		g.Expect(err).NotTo(HaveOccurred())
		c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
		g.Expect(err).NotTo(HaveOccurred())
		hosts := &bmov1.BareMetalHostList{}
		g.Expect(c.List(ctx, hosts)).To(Succeed())
		g.Expect(hosts.Items).To(HaveLen(2))
		for _, h := range hosts.Items {
			g.Expect(h.Status.Provisioning.State).To(Equal(bmov1.StateAvailable), h.Name)
		}
	}, time.Minute, 250*time.Millisecond).Should(Succeed())

	cancel()
	var r result
	g.Eventually(done, 30*time.Second).Should(Receive(&r))
	g.Expect(r.code).To(Equal(0), r.out)
	for _, line := range []string{
		"control plane started",
		"CRDs installed",
		"kubeconfig written: export KUBECONFIG=" + kubeconfig,
		"2 hosts created in namespace default: host-0, host-1",
		"host default/host-0: registering -> inspecting",
		"host default/host-0: inspecting -> available",
		"running; press Ctrl-C to stop",
		"stopping",
	} {
		g.Expect(r.out).To(ContainSubstring(line))
	}
	g.Expect(filepath.Join(dir, "manager.log")).To(BeAnExistingFile())
	expectClusterAPIStopped(g, r.out)
}

func TestDevWithoutBinariesSaysRunMakeTools(t *testing.T) {
	g := NewWithT(t)
	t.Setenv("KUBEBUILDER_ASSETS", t.TempDir())
	out, code := run(context.Background(), "dev", "--no-build", "--dir", filepath.Join(t.TempDir(), "dev"))
	g.Expect(code).To(Equal(1))
	g.Expect(out).To(ContainSubstring("run make tools"))
}

func TestDevRefusesBadFlags(t *testing.T) {
	g := NewWithT(t)
	out, code := run(context.Background(), "dev", "--hosts", "-1")
	g.Expect(code).To(Equal(2))
	g.Expect(out).To(ContainSubstring("--hosts must be 0 or more"))

	_, code = run(context.Background(), "dev", "--apply")
	g.Expect(code).To(Equal(2), "a flag without its value is a usage mistake")

	out, code = run(context.Background(), "dev", "--host-annotation", "no-value")
	g.Expect(code).To(Equal(2))
	g.Expect(out).To(ContainSubstring(`--host-annotation "no-value": write KEY=VALUE`))

	out, code = run(context.Background(), "dev", "--host-annotation", "bad key=1")
	g.Expect(code).To(Equal(2))
	g.Expect(out).To(ContainSubstring(`--host-annotation "bad key=1": bad key is not an annotation key`))

	out, code = run(context.Background(), "dev", "--host-annotation", "a=1", "--host-annotation", "a=2")
	g.Expect(code).To(Equal(2))
	g.Expect(out).To(ContainSubstring("--host-annotation: a is given twice"))

	newDevCommand().Flags().VisitAll(func(f *pflag.Flag) {
		g.Expect(f.Usage).NotTo(BeEmpty(), "flag --%s has no help text", f.Name)
	})
}

// The hosts dev mode creates get the annotations asked for, and the data controllers IP reuse.
func TestDevFlagsShapeHostsAndIPReuse(t *testing.T) {
	g := NewWithT(t)
	f := &devFlags{}
	cmd := &cobra.Command{}
	f.register(cmd, 3)
	g.Expect(cmd.Flags().Parse([]string{"--ip-reuse", "--host-annotation", "a=1", "--host-annotation", "b=x=y"})).To(Succeed())
	opts, err := f.options(cmd)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(opts.IPReuse).To(BeTrue())
	g.Expect(opts.HostOptions.Annotations).To(Equal(map[string]string{"a": "1", "b": "x=y"}))
}
