package chaos

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// clientLimits lift the manager's client rate limit (50 requests/s by default) so that a run of
// a thousand machines takes minutes, not the limiter's quarter of an hour: the faults, not the
// limiter, are under test.
var clientLimits = []string{"--kube-api-qps=500", "--kube-api-burst=1000"}

// managerProc is one run of the manager binary. Its output goes to a file, shown when the test
// fails.
type managerProc struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// startManager runs cmd/manager as a user would against c, with the data and IPAM controllers.
// It is killed when the test ends, also on failure.
func startManager(t *testing.T, c *cluster, name string, extra ...string) *managerProc {
	t.Helper()
	m, err := launchManager(t, c, name, extra...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// launchManager is startManager for any goroutine: it returns its error.
func launchManager(t *testing.T, c *cluster, name string, extra ...string) (*managerProc, error) {
	args := []string{"--kubeconfig", c.kubeconfig, "--namespace", ns,
		"--controllers=infrastructure,ipam", "--leader-election-namespace", ns,
		"--metrics-bind-address=0", "--health-probe-bind-address=0", "--webhook-port=0", "--v=1"}
	args = append(append(args, clientLimits...), extra...)
	m := &managerProc{t: t, name: name, log: filepath.Join(t.TempDir(), name+".log"), done: make(chan struct{})}
	out, err := os.Create(m.log)
	if err != nil {
		return nil, err
	}
	m.cmd = exec.Command(managerBinary, args...)
	m.cmd.Stdout, m.cmd.Stderr = out, out
	// Should the test binary itself die, the manager goes with it.
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := m.cmd.Start(); err != nil {
		_ = out.Close()
		return nil, fmt.Errorf("starting the manager: %w", err)
	}
	go func() {
		_ = m.cmd.Wait()
		_ = out.Close()
		close(m.done)
	}()
	t.Cleanup(func() {
		m.kill()
		if t.Failed() {
			m.showLog(60)
		}
	})
	return m, nil
}

// kill sends SIGKILL and waits for the process to be gone: no graceful shutdown, no lease
// released, requests in flight cut.
func (m *managerProc) kill() {
	select {
	case <-m.done:
		return
	default:
	}
	_ = m.cmd.Process.Signal(syscall.SIGKILL)
	<-m.done
}

// exited says whether the process has stopped on its own.
func (m *managerProc) exited() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

// logHas says whether the manager's output holds s.
func (m *managerProc) logHas(s string) bool {
	b, err := os.ReadFile(m.log)
	return err == nil && bytes.Contains(b, []byte(s))
}

func (m *managerProc) showLog(lines int) {
	b, err := os.ReadFile(m.log)
	if err != nil {
		m.t.Logf("%s: no output: %v", m.name, err)
		return
	}
	var all []string
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		// The API server's warnings about a finalizer's name say nothing about the run.
		if !strings.Contains(l, "warning_handler.go") {
			all = append(all, l)
		}
	}
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	m.t.Logf("%s: last %d lines of output:\n%s", m.name, len(all), strings.Join(all, "\n"))
}

// loadAverage is the machine's 1-minute load average, printed with every figure: on a shared
// machine the figures mean little without it.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return fmt.Sprintf("%s %s %s", f[0], f[1], f[2])
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }
