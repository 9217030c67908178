package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/metalwire/metalwire/internal/testenv"
)

// A manager that cannot start (here its webhook certificate is missing, and its port taken) ends
// the program at once with the manager's own error, not after waitServing's minute of polling a
// server that will never answer, and never says it is ready.
func TestManagerThatCannotStartExits1AtOnce(t *testing.T) {
	g := NewWithT(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = taken.Close() }()
	port := taken.Addr().(*net.TCPAddr).Port
	env, err := testenv.Start()
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { g.Expect(env.Stop()).To(Succeed()) }()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(os.WriteFile(kubeconfig, env.KubeConfig, 0o600)).To(Succeed())

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	var out, errs bytes.Buffer
	start := time.Now()
	code := run(ctx, []string{"--kubeconfig", kubeconfig, "--webhook-port", strconv.Itoa(port), "--webhook-cert-dir", t.TempDir()},
		strings.NewReader(""), &out, &errs)
	took := time.Since(start)
	g.Expect(ctx.Err()).NotTo(HaveOccurred(), "run did not return within 50 s (it ran until its context ended)")
	g.Expect(code).To(Equal(1), errs.String())
	g.Expect(took).To(BeNumerically("<", 20*time.Second), "run returned after %s", took)
	g.Expect(out.String()).To(BeEmpty(), "no ready line")
	g.Expect(errs.String()).To(ContainSubstring("tls.crt"), "the manager's own error")
	g.Expect(errs.String()).NotTo(ContainSubstring("did not start within a minute"))
}
