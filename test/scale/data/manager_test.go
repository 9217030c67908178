package data

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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

// manager is the image's manager running in a process of its own.
type manager struct {
	cmd *exec.Cmd
	// done is closed when the process has ended; err is then why.
	done chan struct{}
	err  error
	// stop ends it (before its API server stops); it is also called when the test ends.
	stop func()
	// containerPeak is its cgroup's peak usage once it has stopped, when it ran in one.
	containerPeak int64
	// log is the file its output goes to.
	log string
}

// softLimitFromContainer fails the test unless the manager's log says it took its soft memory
// limit from its container's, as a manager in a pod does.
func (m *manager) softLimitFromContainer(t *testing.T) {
	t.Helper()
	out, err := os.ReadFile(m.log)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if _, limit, ok := strings.Cut(line, "softLimit="); ok {
			if !strings.Contains(limit, "containerLimit") {
				t.Fatalf("the manager in a container did not take its soft limit from it: %s", line)
			}
			fmt.Printf("  the manager's log: softLimit=%s\n", limit)
			return
		}
	}
	t.Fatalf("the manager's log does not say what soft memory limit it runs with:\n%s", out)
}

// thrashFaults is how many major page faults say a manager in a container is thrashing: a
// limit below what it needs makes the kernel take back the binary's pages as soon as they are
// read, and the manager then waits for the disk instead of being killed. A run that fits has a
// handful.
const thrashFaults = 10000

// exited is why the manager has ended, or is as good as ended (thrashing in its container); nil
// while it runs.
func (m *manager) exited() error {
	select {
	case <-m.done:
		if m.err == nil {
			return errors.New("it exited")
		}
		return m.err
	default:
	}
	if containerLimit > 0 {
		if faults := measure.MajorFaults(m.cmd.Process.Pid); faults > thrashFaults {
			return fmt.Errorf("it is thrashing: %d major page faults, its pages read from disk again and again; %s=%s is too small for it",
				faults, measure.ContainerEnv, os.Getenv(measure.ContainerEnv))
		}
	}
	return nil
}

// startManager runs the image's manager (cmd/manager built from this checkout) in a process of
// its own, so that its CPU and memory are measured apart from the benchmark's. extra are further
// flags; the rest are its defaults, as shipped, and so is its soft memory limit (memoryLimit), or
// it runs in a container of containerLimit bytes. With profilerAddr set it serves pprof there.
func startManager(t *testing.T, e *testenv.Env, ns, profilerAddr string, extra []string) *manager {
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
	m := &manager{cmd: exec.Command(managerBinary, args...), done: make(chan struct{})}
	// Gone with the benchmark, also when it is killed before its cleanups run.
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	m.cmd.Env = slices.DeleteFunc(os.Environ(), func(v string) bool { return strings.HasPrefix(v, "GOMEMLIMIT=") })
	var container *measure.Container
	if containerLimit > 0 {
		// As in a pod: the manager reads its limit from the cgroup, and its binary's pages, read
		// afresh, count in it.
		if err := measure.Evict(managerBinary); err != nil {
			t.Fatal(err)
		}
		var err error
		if container, err = measure.NewContainer(fmt.Sprintf("metalwire-bench-%d-%s", os.Getpid(), ns), containerLimit); err != nil {
			t.Fatal(err)
		}
		container.Wrap(m.cmd)
	} else {
		// The soft memory limit the Deployment gives the image's manager (measure.ManagerMemoryLimit).
		m.cmd.Env = append(m.cmd.Env, "GOMEMLIMIT="+memoryLimit)
	}
	logs, err := os.Create(filepath.Join(t.TempDir(), "manager.log"))
	if err == nil {
		m.log = logs.Name()
		m.cmd.Stdout, m.cmd.Stderr = logs, logs
		err = m.cmd.Start()
		_ = logs.Close()
	}
	if err != nil {
		if container != nil {
			_ = container.Remove()
		}
		t.Fatalf("starting the manager: %v", err)
	}
	go func() {
		m.err = m.cmd.Wait()
		if container != nil {
			if kills, err := container.OOMKills(); err != nil {
				m.err = errors.Join(m.err, err)
			} else if kills > 0 {
				m.err = fmt.Errorf("%w; the kernel killed it %d times for its memory limit (%s)", m.err, kills, container.Describe())
			}
		}
		close(m.done)
	}()
	var once sync.Once
	m.stop = func() {
		once.Do(func() {
			_ = m.cmd.Process.Signal(syscall.SIGTERM)
			<-m.done
			if container != nil {
				var err error
				if m.containerPeak, err = container.Peak(); err != nil {
					t.Error(err)
				}
				if err := container.Remove(); err != nil {
					t.Errorf("removing the manager's cgroup: %v", err)
				}
			}
			if t.Failed() {
				out, _ := os.ReadFile(m.log)
				t.Logf("manager output:\n%s", out)
			}
		})
	}
	t.Cleanup(m.stop)
	return m
}

// waitForManager waits until the manager has started its controllers and finished its start-up
// pass: every Metal3Machine of ns carries the machine controller's finalizer and a status it
// wrote (it finds no Cluster, so it writes each machine twice and stops), and the API server has
// then seen no write and called no conversion webhook for 3 s. At 10,000 machines that pass takes a while, and must not be charged
// to the data path: a quiet period alone can pass while the manager still fills its caches, and
// leave the pass to run during the measured part (writes outside the data path, printed).
func waitForManager(t *testing.T, e *testenv.Env, mgr *manager, ns string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(15 * time.Minute)
	check := func() {
		if err := mgr.exited(); err != nil {
			t.Fatalf("the manager stopped before the run: %v", err)
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
