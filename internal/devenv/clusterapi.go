package devenv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/metalwire/metalwire/internal/controlplane"
)

// ClusterAPIBinary is the program that runs Cluster API's controllers and webhooks for dev mode
// (cmd/metalwire-capi). It has a process of its own because Cluster API's code links Go's testing
// package, which the CLI does not.
const ClusterAPIBinary = "metalwire-capi"

// ClusterAPIBinaryEnv, when set, is the path of ClusterAPIBinary to run, before any other place
// is looked at.
const ClusterAPIBinaryEnv = "METALWIRE_CAPI"

// clusterAPIReadyLine is what ClusterAPIBinary prints on stdout once it serves (its readyLine).
const clusterAPIReadyLine = "ready"

// clusterAPIStopTimeout is how long Cluster API's process has to end after SIGTERM before it is
// killed.
const clusterAPIStopTimeout = 30 * time.Second

// findClusterAPIBinary says where ClusterAPIBinary is: $METALWIRE_CAPI, beside the running
// program (make build and go install put both in one folder), then PATH. When none has it and
// build is allowed, a metalwire source tree around the working directory builds it into its bin/
// (so `go run ./cmd/metalwire dev` works; go build does nothing when it is up to date).
func findClusterAPIBinary(ctx context.Context, build bool, p *printer) (string, error) {
	if path := os.Getenv(ClusterAPIBinaryEnv); path != "" {
		if _, err := os.Stat(path); err != nil { //nolint:gosec // the user names the program to run
			return "", fmt.Errorf("$%s: %w; unset it or build the program there (go build -o %s ./cmd/%s)", ClusterAPIBinaryEnv, err, path, ClusterAPIBinary)
		}
		return path, nil
	}
	var beside string
	if exe, err := os.Executable(); err == nil {
		beside = filepath.Join(filepath.Dir(exe), ClusterAPIBinary)
		if _, err := os.Stat(beside); err == nil {
			return beside, nil
		}
	}
	if path, err := exec.LookPath(ClusterAPIBinary); err == nil {
		return path, nil
	}
	missing := fmt.Errorf("%s, which runs Cluster API's controllers in dev mode, is neither beside this program (%s) nor on PATH: build it with make build (bin/%s, beside bin/metalwire) or go install ./cmd/..., or name it in $%s",
		ClusterAPIBinary, beside, ClusterAPIBinary, ClusterAPIBinaryEnv)
	if !build {
		return "", missing
	}
	root, err := controlplane.RepoRoot()
	if err != nil {
		return "", missing
	}
	out := filepath.Join(root, "bin", ClusterAPIBinary)
	p.printf("%s: building it from the source tree into %s", ClusterAPIBinary, out)
	if err := BuildClusterAPI(ctx, root, out); err != nil {
		return "", errors.Join(missing, err)
	}
	return out, nil
}

// BuildClusterAPI builds ClusterAPIBinary from the metalwire source tree at root into out. Tests
// that run dev mode build it into a folder of their own and name it in $METALWIRE_CAPI.
func BuildClusterAPI(ctx context.Context, root, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/"+ClusterAPIBinary)
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/%s in %s: %w\n%s", ClusterAPIBinary, root, err, msg)
	}
	return nil
}

// clusterAPI is Cluster API's process, started by startClusterAPI and ended by stop.
type clusterAPI struct {
	cmd *exec.Cmd
	// stdin is the process's stdin: it stops when this end closes, dev mode's process ending
	// included.
	stdin io.Closer
	// exited is closed once the process has ended; err and state then say how.
	exited chan struct{}
	err    error
	state  string
	hooks  *envtest.WebhookInstallOptions
}

// startClusterAPI installs Cluster API's webhook configurations, calling a port and certificate
// of their own, and starts binary serving them, with Cluster API's controllers, against
// kubeconfig. Its log lines go to logs, each prefixed with its name. It returns once the process
// says it is ready; the process is stopped again if it does not get there.
func startClusterAPI(ctx context.Context, binary, kubeconfig string, cfg *rest.Config, logs io.Writer) (_ *clusterAPI, reterr error) {
	hooks, err := clusterAPIWebhooks()
	if err != nil {
		return nil, err
	}
	c := &clusterAPI{hooks: hooks, exited: make(chan struct{})}
	defer func() {
		if reterr != nil {
			reterr = errors.Join(reterr, c.stop())
		}
	}()
	// Install makes a CA and serving certificate in a folder of its own, picks a free port and
	// points the configurations at https://127.0.0.1:<port>/<path>.
	if err := hooks.Install(cfg); err != nil {
		return c, fmt.Errorf("installing Cluster API's webhook configurations: %w", err)
	}
	c.cmd = exec.Command(binary,
		"--kubeconfig", kubeconfig,
		"--webhook-host", hooks.LocalServingHost,
		"--webhook-port", strconv.Itoa(hooks.LocalServingPort),
		"--webhook-cert-dir", hooks.LocalServingCertDir,
		"--stop-on-stdin-close")
	// A group of its own: Ctrl-C in a terminal reaches dev mode alone, which stops its manager
	// first and this process next, before the API server goes.
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := c.cmd.StdinPipe()
	if err != nil {
		return c, err
	}
	c.stdin = stdin
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		return c, err
	}
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		return c, err
	}
	if err := c.cmd.Start(); err != nil {
		return c, fmt.Errorf("starting %s: %w", binary, err)
	}
	tail := &lastLines{n: 5}
	var relayed sync.WaitGroup
	relayed.Go(func() { relayLines(stderr, logs, ClusterAPIBinary+": ", tail) })
	ready := make(chan struct{})
	relayed.Go(func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			if s.Text() == clusterAPIReadyLine {
				close(ready)
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	})
	go func() {
		// Wait closes the pipes: read them to the end first.
		relayed.Wait()
		c.err = c.cmd.Wait()
		c.state = c.cmd.ProcessState.String()
		close(c.exited)
	}()

	select {
	case <-ready:
		return c, nil
	case <-c.exited:
		return c, fmt.Errorf("%s (Cluster API's controllers) ended before it was ready (%s); its last lines:\n%s", binary, c.state, tail)
	case <-time.After(2 * time.Minute):
		return c, fmt.Errorf("%s (Cluster API's controllers) was not ready within 2 minutes; its last lines:\n%s", binary, tail)
	case <-ctx.Done():
		return c, ctx.Err()
	}
}

// pid is the process's id, 0 before it started.
func (c *clusterAPI) pid() int {
	if c == nil || c.cmd == nil || c.cmd.Process == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// stop ends the process (SIGTERM, then SIGKILL after clusterAPIStopTimeout), waits for it and
// removes the webhook certificate. An exit caused by the SIGTERM is not an error.
func (c *clusterAPI) stop() error {
	var errs []error
	if c.cmd != nil && c.cmd.Process != nil {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		_ = c.stdin.Close()
		select {
		case <-c.exited:
		case <-time.After(clusterAPIStopTimeout):
			_ = c.cmd.Process.Kill()
			<-c.exited
			errs = append(errs, fmt.Errorf("%s did not stop within %s of SIGTERM and was killed", ClusterAPIBinary, clusterAPIStopTimeout))
		}
		if c.err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", ClusterAPIBinary, c.err))
		}
		c.cmd = nil
	}
	if c.hooks != nil {
		errs = append(errs, c.hooks.Cleanup())
		c.hooks = nil
	}
	return errors.Join(errs...)
}

// relayLines copies r to w line by line, each line prefixed, and keeps the last few in tail.
func relayLines(r io.Reader, w io.Writer, prefix string, tail *lastLines) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64*1024), 1024*1024)
	for s.Scan() {
		tail.add(s.Text())
		_, _ = fmt.Fprintf(w, "%s%s\n", prefix, s.Text())
	}
	_, _ = io.Copy(io.Discard, r)
}

// lastLines keeps the last n lines added.
type lastLines struct {
	mu    sync.Mutex
	n     int
	lines []string
}

func (l *lastLines) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
	if len(l.lines) > l.n {
		l.lines = l.lines[len(l.lines)-l.n:]
	}
}

func (l *lastLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
