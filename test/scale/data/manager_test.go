package data

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/testenv"
	"github.com/metalwire/metalwire/test/scale/measure"
)

// generousLimits are client limits high enough not to be what limits a run: the anchors'
// 1,000 requests/s.
var generousLimits = []string{"--kube-api-qps=1000", "--kube-api-burst=2000"}

// managedGroups are the controller groups the benchmark's manager runs: those of the four
// controllers a data-templating scale-up exercises (IPPool in ipam; Metal3DataTemplate,
// Metal3DataClaim and Metal3Data in infrastructure), with everything else those groups bring, as
// a user runs them. The machine controller of infrastructure finds no Cluster for the fixture's
// Metal3Machines and only writes their finalizer and status once, before the measured part.
const managedGroups = "--controllers=infrastructure,ipam"

// startManager runs the image's manager (cmd/manager built from this checkout) in a process of its own, so that its CPU and memory are
// measured apart from the benchmark's. extra are further flags; the rest are its defaults, as
// shipped, and so is its soft memory limit (memoryLimit). With profilerAddr set it serves pprof there. stop ends it (before its API server
// stops); it is also called when the test ends.
func startManager(t *testing.T, e *testenv.Env, ns, profilerAddr string, extra []string) (cmd *exec.Cmd, stop func()) {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, e.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--kubeconfig=" + kubeconfig, "--namespace=" + ns, managedGroups,
		"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0"}, extra...)
	if profilerAddr != "" {
		args = append(args, "--profiler-address="+profilerAddr)
	}
	cmd = exec.Command(managerBinary, args...)
	// The soft memory limit the Deployment gives the image's manager (measure.ManagerMemoryLimit).
	cmd.Env = append(os.Environ(), "GOMEMLIMIT="+memoryLimit)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the manager: %v", err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
			if t.Failed() {
				t.Logf("manager output:\n%s", logs.String())
			}
		})
	}
	t.Cleanup(stop)
	return cmd, stop
}

// waitForManager waits until the manager has started its controllers and finished its start-up
// pass: every Metal3Machine of ns carries the machine controller's finalizer and a status it
// wrote (it finds no Cluster, so it writes each machine twice and stops), and the API server has
// then seen no write and called no conversion webhook for 3 s. At 10,000 machines that pass takes a while, and must not be charged
// to the data path: a quiet period alone can pass while the manager still fills its caches, and
// leave the pass to run during the measured part (writes outside the data path, printed).
func waitForManager(t *testing.T, e *testenv.Env, mgr *exec.Cmd, ns string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(15 * time.Minute)
	check := func() {
		if mgr.ProcessState != nil {
			t.Fatalf("the manager exited: %s", mgr.ProcessState)
		}
		if time.Now().After(deadline) {
			t.Fatal("the manager has not finished its start-up pass over the Metal3Machines 15 minutes after it started, before any claim exists")
		}
	}
	for {
		check()
		list := &infrav1.Metal3MachineList{}
		if err := e.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(list.Items, func(m infrav1.Metal3Machine) bool {
			return !controllerutil.ContainsFinalizer(&m, infrav1.MachineFinalizer) || len(m.Status.Conditions) == 0
		}) {
			break
		}
		time.Sleep(2 * time.Second)
	}
	// Then until its writes have stopped, and the API server has stopped converting them for its
	// v1beta1 watch caches (which follow etcd behind the writes: at 10,000 machines a loaded
	// server was still converting the start-up pass's writes minutes into the run).
	var last int64 = -1
	quiet := 0
	for quiet < 3 {
		check()
		m, err := measure.ReadMetrics(ctx, e.Config)
		if err != nil {
			t.Fatal(err)
		}
		if total := m.Writes().Total() + m.Conversions().Total(); total == last {
			quiet++
		} else {
			last, quiet = total, 0
		}
		time.Sleep(time.Second)
	}
}
