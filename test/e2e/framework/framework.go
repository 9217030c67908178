// Package framework is what the end-to-end test packages share: dev mode started for a package's
// tests, and the waits and changes they make as a user would.
package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	"github.com/metalwire/metalwire/internal/devenv"
	"github.com/metalwire/metalwire/internal/simulator"
)

const (
	// Wait is how long a test waits for hosts and machines to get where it expects.
	Wait = 90 * time.Second
	// Poll is how often it looks.
	Poll = 200 * time.Millisecond
)

// Delays are short simulator delays that keep the suites quick on two cores; every state
// still goes by.
var Delays = simulator.Delays{
	Registering:    100 * time.Millisecond,
	Inspecting:     100 * time.Millisecond,
	Provisioning:   200 * time.Millisecond,
	Deprovisioning: 200 * time.Millisecond,
}

// Main runs a package's tests against dev mode started with opts (Dir and Delays are filled
// in), then stops it; call it from TestMain. It sets *env before the tests run. When a test
// fails, the controllers' log is kept and its path printed.
func Main(m *testing.M, env **devenv.Env, opts devenv.Options) {
	code, err := run(m, env, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M, env **devenv.Env, opts devenv.Options) (int, error) {
	dir, err := os.MkdirTemp("", "metalwire-e2e-")
	if err != nil {
		return 0, err
	}
	keep := false
	defer func() {
		if !keep {
			_ = os.RemoveAll(dir)
		}
	}()
	if err := BuildClusterAPI(dir); err != nil {
		return 0, err
	}
	opts.Dir, opts.Delays = dir, Delays
	if *env, err = devenv.Start(context.Background(), opts); err != nil {
		return 0, err
	}
	code := m.Run()
	if code != 0 {
		fmt.Fprintln(os.Stderr, "e2e: the controllers' log is", filepath.Join(dir, "manager.log"), "(kept)")
		keep = true
	}
	return code, (*env).Stop()
}

// WaitUntilDone waits until every Machine of namespace ns has a provisioned host and every host
// annotated for pre-provisioning was inspected with its data, as `make demo` does; on timeout
// it shows what is missing.
func WaitUntilDone(t *testing.T, env *devenv.Env, ns string) devenv.Progress {
	t.Helper()
	var p devenv.Progress
	NewWithT(t).Eventually(func(g Gomega) {
		var err error
		p, err = devenv.Observe(context.Background(), env.Client, ns)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(p.Done()).To(BeTrue(), "%s; waiting for:\n%s", p.Summary(), strings.Join(p.Waiting, "\n"))
	}, Wait, Poll).Should(Succeed())
	return p
}

// Host reads a BareMetalHost.
func Host(g Gomega, env *devenv.Env, ns, name string) *bmov1.BareMetalHost {
	h := &bmov1.BareMetalHost{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, h)).To(Succeed())
	return h
}

// Scale sets a MachineDeployment's replicas, as kubectl scale does.
func Scale(t *testing.T, env *devenv.Env, ns, name string, replicas int32) {
	t.Helper()
	g := NewWithT(t)
	md := &clusterv1.MachineDeployment{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, md)).To(Succeed())
	patch := client.MergeFrom(md.DeepCopy())
	md.Spec.Replicas = &replicas
	g.Expect(env.Client.Patch(context.Background(), md, patch)).To(Succeed())
}

// BootNetwork reads a file the simulator wrote for a host (simulator.NetworkDataFile or
// simulator.PreprovNetworkFile).
func BootNetwork(g Gomega, env *devenv.Env, ns, host, file string) *simulator.BootNetwork {
	doc, err := simulator.ReadBootNetwork(simulator.HostDir(env.Simulator.Dir, ns, host), file)
	g.Expect(err).NotTo(HaveOccurred())
	return doc
}
