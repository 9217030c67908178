package devenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/simulator"
)

// DemoOptions add to Options what `metalwire demo` needs.
type DemoOptions struct {
	Options
	// Timeout bounds the wait for every host to reach its state.
	Timeout time.Duration
	// Poll is how often progress is read (500ms if zero).
	Poll time.Duration
}

// RunDemo starts the environment, applies opts.Apply, waits until every Machine has a provisioned
// host and every host asking for pre-provisioning data was inspected with it, prints the host
// table and one host's network_data.json, and stops. It returns an error saying what did not
// happen if any of that fails, the environment stopped in every case.
func RunDemo(ctx context.Context, opts DemoOptions) (reterr error) {
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	// The simulator reports host changes from other goroutines: one lock keeps lines whole.
	opts.Out = &syncWriter{w: opts.Out}
	if opts.Dir == "" {
		opts.Dir = DefaultDir
	}
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	if opts.Poll == 0 {
		opts.Poll = 500 * time.Millisecond
	}
	p := &printer{out: opts.Out}
	p.printf("== starting dev mode")
	e, err := Start(ctx, opts.Options)
	if err != nil {
		return err
	}
	defer func() {
		p.printf("== stopping")
		reterr = errors.Join(reterr, e.Stop())
		if reterr == nil {
			p.printf("demo complete: every host reached its state")
		}
	}()

	p.printf("== waiting for every host (timeout %s)", opts.Timeout)
	if err := waitForHosts(ctx, e, opts, p); err != nil {
		if rows, terr := HostTable(context.WithoutCancel(ctx), e.Client, opts.Dir, opts.Namespace); terr == nil {
			p.printf("== hosts when the demo gave up")
			_ = printTable(opts.Out, rows)
		}
		return err
	}

	p.printf("== hosts")
	rows, err := HostTable(ctx, e.Client, opts.Dir, opts.Namespace)
	if err != nil {
		return err
	}
	if err := printTable(opts.Out, rows); err != nil {
		return err
	}
	if err := printFabric(ctx, e, opts, p, rows); err != nil {
		return err
	}
	if err := printNetworkData(opts.Out, p, rows); err != nil {
		return err
	}
	return checkHostsAgree(ctx, e, opts, p)
}

// checkHostsAgree fails the demo if any host's network data disagrees with its switch ports
// (the controllers' HostSwitchMismatch condition), naming each.
func checkHostsAgree(ctx context.Context, e *Env, opts DemoOptions, p *printer) error {
	checked, problems, err := hostSwitchVerdicts(ctx, e.Client, opts.Namespace, 20*time.Second)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("demo failed: %d of %d hosts' network data disagree with their switch ports (condition %s):\n  %s",
			len(problems), checked, infrav1.DataHostSwitchMismatchCondition, strings.Join(problems, "\n  "))
	}
	p.printf("== hosts and switch ports agree: %d hosts checked (condition %s=False on each Metal3Data)", checked, infrav1.DataHostSwitchMismatchCondition)
	return nil
}

// waitForHosts polls the namespace until Observe says done, printing the counter whenever it
// changes, and explains what is missing if the timeout or ctx ends first.
func waitForHosts(ctx context.Context, e *Env, opts DemoOptions, p *printer) error {
	deadline := time.NewTimer(opts.Timeout)
	defer deadline.Stop()
	tick := time.NewTicker(opts.Poll)
	defer tick.Stop()
	last := ""
	var progress Progress
	for {
		var err error
		if progress, err = Observe(ctx, e.Client, opts.Namespace); err != nil && ctx.Err() == nil {
			return err
		}
		if summary := progress.Summary(); summary != last {
			p.printf("progress: %s", summary)
			last = summary
		}
		if progress.Done() {
			return nil
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return notDone(fmt.Sprintf("timed out after %s", opts.Timeout), progress, opts.Dir)
		case <-ctx.Done():
			return notDone("interrupted", progress, opts.Dir)
		case err := <-e.done:
			e.cancel = nil // the manager already ended; Stop must not wait for it again
			return fmt.Errorf("the controllers stopped: %w", err)
		}
	}
}

func notDone(why string, progress Progress, dir string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "demo failed: %s with %s", why, progress.Summary())
	if progress.Machines == 0 {
		b.WriteString("; the manifests ask for no Machines: apply a cluster (examples/cluster)")
	}
	for _, w := range progress.Waiting {
		b.WriteString("\n  ")
		b.WriteString(w)
	}
	fmt.Fprintf(&b, "\ncontrollers' logs: %s", filepath.Join(dir, "manager.log"))
	return errors.New(b.String())
}

// printNetworkData shows the network_data.json of the first provisioned host, the file the host
// would configure its network from.
func printNetworkData(out io.Writer, p *printer, rows []HostRow) error {
	for _, r := range rows {
		if r.State != string(bmov1.StateProvisioned) {
			continue
		}
		path := filepath.Join(r.Dir, simulator.NetworkDataFile)
		raw, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("host %s is provisioned but its network data cannot be read: %w", r.Host, err)
		}
		p.printf("== %s", path)
		_, err = out.Write(append(raw, '\n'))
		return err
	}
	return errors.New("demo failed: no provisioned host has a network_data.json")
}

// printTable writes the table in one piece so no host change lands inside it.
func printTable(out io.Writer, rows []HostRow) error {
	var b bytes.Buffer
	if err := PrintHostTable(&b, rows); err != nil {
		return err
	}
	_, err := out.Write(b.Bytes())
	return err
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// printFabric prints each host's cards on the simulated (stand-in) switch and their VLANs,
// beside its addresses, once the ClusterNetworks have their VLANs.
func printFabric(ctx context.Context, e *Env, opts DemoOptions, p *printer, hosts []HostRow) error {
	// The Metal3Machine controller selected each machine's host in the ClusterNetwork and waited
	// for its ports to be ready before provisioning it, so a provisioned host's ports are set.
	waitForVLANs(ctx, e.Client, opts.Namespace, 20*time.Second)
	lines, err := clusterNetworkVLANs(ctx, e.Client, opts.Namespace)
	if err != nil {
		return err
	}
	p.printf("== switch ports (switch %s is a STAND-IN: it configures nothing real)", simulator.SwitchName)
	for _, l := range lines {
		p.printf("%s", l)
	}
	rows, err := FabricTable(ctx, e.Client, opts.Namespace, hosts)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := PrintFabricTable(&b, rows); err != nil {
		return err
	}
	if _, err = opts.Out.Write(b.Bytes()); err != nil {
		return err
	}
	path, err := writeFabricPicture(ctx, e.Client, opts.Namespace, opts.Dir)
	if err != nil && path == "" {
		return err
	}
	if err != nil {
		p.printf("the fabric as a graph: %s (no SVG: %v)", path, err)
		return nil
	}
	p.printf("the fabric as a picture: %s (metalwire fabric show --format svg draws it again)", absolute(path))
	return nil
}
