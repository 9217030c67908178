package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"

	"github.com/metalwire/metalwire/internal/testenv"
)

// run executes the CLI as a user would and returns its output and exit code.
func run(ctx context.Context, args ...string) (string, int) {
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(&out, "metalwire:", err)
		return out.String(), exitCode(err)
	}
	return out.String(), 0
}

func TestVersion(t *testing.T) {
	g := NewWithT(t)
	out, code := run(context.Background(), "version")
	g.Expect(code).To(Equal(0))
	g.Expect(out).To(HavePrefix("metalwire "))
	g.Expect(out).To(ContainSubstring("linux/"))
}

func TestManagerHelpDocumentsEveryFlag(t *testing.T) {
	g := NewWithT(t)
	cmd := newManagerCommand()
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		g.Expect(strings.TrimSpace(f.Usage)).NotTo(BeEmpty(), "flag --%s has no help text", f.Name)
	})
	out, code := run(context.Background(), "manager", "--help")
	g.Expect(code).To(Equal(0))
	for _, flag := range []string{"--kubeconfig", "--leader-elect", "--metrics-bind-address", "--health-probe-bind-address", "--controllers", "--namespace"} {
		g.Expect(out).To(ContainSubstring(flag))
	}
}

func TestManagerRefusesUnknownControllerGroup(t *testing.T) {
	g := NewWithT(t)
	out, code := run(context.Background(), "manager", "--controllers=infrastructure,switches")
	g.Expect(code).To(Equal(2), "a usage mistake exits 2")
	g.Expect(out).To(ContainSubstring(`unknown group "switches"`))
	g.Expect(out).To(ContainSubstring("infrastructure, ipam, preprovisioning"))
}

func TestManagerRefusesMissingKubeconfig(t *testing.T) {
	g := NewWithT(t)
	out, code := run(context.Background(), "manager", "--kubeconfig", filepath.Join(t.TempDir(), "nope"))
	g.Expect(code).To(Equal(1))
	g.Expect(out).To(ContainSubstring("--kubeconfig"))
	g.Expect(strings.Count(strings.TrimSpace(out), "\n")).To(BeZero(), "one line")
}

func TestManagerServesHealthAgainstAnAPIServer(t *testing.T) {
	g := NewWithT(t)
	env, err := testenv.Start()
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = env.Stop() }()

	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(os.WriteFile(kubeconfig, env.KubeConfig, 0o600)).To(Succeed())
	probe := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		_, code := run(ctx, "manager", "--kubeconfig", kubeconfig, "--leader-elect=false",
			"--metrics-bind-address=0", "--health-probe-bind-address", probe)
		done <- code
	}()

	g.Eventually(func() (int, error) {
		resp, err := http.Get("http://" + probe + "/readyz")
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		return resp.StatusCode, nil
	}, 2*time.Minute, 200*time.Millisecond).Should(Equal(http.StatusOK), "every controller group starts; under load the informers take a while")

	cancel()
	g.Eventually(done, 30*time.Second).Should(Receive(Equal(0)), "the manager stops cleanly when told to")
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
