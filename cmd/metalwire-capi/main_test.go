package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// A usage mistake exits 2 and names the flag and what to give; --help exits 0.
func TestUsageMistakesExit2NamingTheFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{args: nil, want: "--kubeconfig is required"},
		{args: []string{"--kubeconfig", "k", "--webhook-cert-dir", "d"}, want: "--webhook-port 0: give the port the webhook configurations call (1-65535)"},
		{args: []string{"--kubeconfig", "k", "--webhook-port", "70000", "--webhook-cert-dir", "d"}, want: "--webhook-port 70000"},
		{args: []string{"--kubeconfig", "k", "--webhook-port", "9443"}, want: "--webhook-cert-dir is required"},
		{args: []string{"--no-such-flag"}, want: "unknown flag: --no-such-flag"},
	} {
		g := NewWithT(t)
		var out, errs bytes.Buffer
		code := run(context.Background(), c.args, strings.NewReader(""), &out, &errs)
		g.Expect(code).To(Equal(2), "%v: %s", c.args, errs.String())
		g.Expect(errs.String()).To(ContainSubstring(c.want), "%v", c.args)
		g.Expect(out.String()).To(BeEmpty(), "%v: nothing on stdout but the ready line", c.args)
	}
	var out, errs bytes.Buffer
	NewWithT(t).Expect(run(context.Background(), []string{"--help"}, strings.NewReader(""), &out, &errs)).To(Equal(0))
	NewWithT(t).Expect(errs.String()).To(ContainSubstring("--stop-on-stdin-close"))
}

// A kubeconfig that cannot be read is a failure while running (1), naming the file.
func TestUnreadableKubeconfigExits1(t *testing.T) {
	g := NewWithT(t)
	var out, errs bytes.Buffer
	missing := t.TempDir() + "/missing"
	code := run(context.Background(), []string{"--kubeconfig", missing, "--webhook-port", "9443", "--webhook-cert-dir", t.TempDir()}, strings.NewReader(""), &out, &errs)
	g.Expect(code).To(Equal(1), errs.String())
	g.Expect(errs.String()).To(ContainSubstring("--kubeconfig " + missing))
}
