package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	networkv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/testenv"
)

// gracePeriod is the manager's default --graceful-shutdown-timeout: what its controllers get to
// finish once told to stop (the Pod's terminationGracePeriodSeconds, 15 s, leaves time after it
// to release the Lease).
const gracePeriod = 10 * time.Second

// TestStopsWithinGracePeriodMidWork starts the manager binary as the image runs it (every
// controller group, leader election on) while it has work queued: a batch of new IPClaims and a
// NetworkDevice whose switch does not answer (its driver waits for the connection). As soon as
// the first claim of the batch has its address it sends SIGTERM, as the kubelet does, and
// measures how long the process takes to exit: within the grace period, exit code 0, every
// time. METALWIRE_STOP_CYCLES sets the number of cycles (3).
func TestStopsWithinGracePeriodMidWork(t *testing.T) {
	g := NewWithT(t)
	cycles := 3
	if v := os.Getenv("METALWIRE_STOP_CYCLES"); v != "" {
		n, err := strconv.Atoi(v)
		g.Expect(err).NotTo(HaveOccurred(), "METALWIRE_STOP_CYCLES")
		cycles = n
	}
	binary := filepath.Join(t.TempDir(), "manager")
	build := exec.Command("go", "build", "-trimpath", "-o", binary, ".") // as make image builds it (and the build cache has it)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "go build: %s", out)

	env, err := testenv.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(os.WriteFile(kubeconfig, env.KubeConfig, 0o600)).To(Succeed())
	ctx := context.Background()
	ns := env.NewNamespace(t)

	start, end := ipamv1.IPAddressStr("10.0.0.1"), ipamv1.IPAddressStr("10.0.255.254")
	g.Expect(env.Client.Create(ctx, &ipamv1.IPPool{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "big"},
		Spec:       ipamv1.IPPoolSpec{NamePrefix: "big", Prefix: 16, Pools: []ipamv1.Pool{{Start: &start, End: &end}}},
	})).To(Succeed())
	// TEST-NET-1: nothing answers, a connection attempt waits for its timeout.
	g.Expect(env.Client.Create(ctx, &networkv1.NetworkDevice{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "silent"},
		Spec: networkv1.NetworkDeviceSpec{Switches: []networkv1.Switch{
			{Name: "tor", Address: "192.0.2.1", NetworkOS: networkv1.NetworkOSOpenvSwitch, Bridge: "br0", IdleVLAN: 1},
		}},
	})).To(Succeed())

	var took []time.Duration
	for cycle := range cycles {
		const batch = 150
		for i := range batch {
			g.Expect(env.Client.Create(ctx, &ipamv1.IPClaim{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("c%d-%d", cycle, i)},
				Spec:       ipamv1.IPClaimSpec{Pool: corev1.ObjectReference{Name: "big"}},
			})).To(Succeed())
		}
		logPath := filepath.Join(t.TempDir(), "manager.log")
		logFile, err := os.Create(logPath)
		g.Expect(err).NotTo(HaveOccurred())
		cmd := exec.Command(binary, "--kubeconfig="+kubeconfig, "--leader-elect", "--leader-election-namespace="+ns,
			"--health-probe-bind-address=0", "--metrics-bind-address=0", "--webhook-cert-dir="+t.TempDir())
		cmd.Stdout, cmd.Stderr = logFile, logFile
		g.Expect(cmd.Start()).To(Succeed())
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				_ = cmd.Process.Kill()
			}
			_ = logFile.Close()
		})

		first := fmt.Sprintf("c%d-0", cycle)
		g.Eventually(func() (*corev1.ObjectReference, error) {
			c := &ipamv1.IPClaim{}
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: first}, c)
			return c.Status.Address, err
		}).WithTimeout(3*time.Minute).WithPolling(50*time.Millisecond).ShouldNot(BeNil(), "the manager serves claims")
		served := servedClaims(ctx, g, env, ns, cycle, batch)

		sent := time.Now()
		g.Expect(cmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
		var exit error
		select {
		case exit = <-exited:
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			exit = errors.New("still running a minute after SIGTERM: killed")
		}
		d := time.Since(sent)
		took = append(took, d)
		t.Logf("cycle %d: %d of %d claims served at SIGTERM; exited %s later: %v", cycle+1, served, batch, d.Round(time.Millisecond), exit)
		if exit != nil || d > gracePeriod {
			log, _ := os.ReadFile(logPath)
			t.Errorf("cycle %d: the manager took %s to stop (grace period %s), exit %v; its log:\n%s", cycle+1, d, gracePeriod, exit, log)
		}
	}
	t.Logf("stop times: %v", took)
}

func servedClaims(ctx context.Context, g Gomega, env *testenv.Env, ns string, cycle, batch int) int {
	list := &ipamv1.IPClaimList{}
	g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	n := 0
	for _, c := range list.Items {
		for i := range batch {
			if c.Name == fmt.Sprintf("c%d-%d", cycle, i) && c.Status.Address != nil {
				n++
			}
		}
	}
	return n
}
