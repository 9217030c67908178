package chaos

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// replica runs the manager as a Deployment's Pod would: when the process exits on its own (a
// replica that cannot renew its lease in time stops leading and exits, as it must), it is
// started again. A process the test kills stays dead until the test starts it again.
type replica struct {
	t     *testing.T
	c     *cluster
	name  string
	args  []string
	mu    sync.Mutex
	proc  *managerProc
	runs  int
	dead  bool // killed by the test: not restarted
	stop  chan struct{}
	wg    sync.WaitGroup
	exits int // times the process exited on its own and was restarted
}

func startReplica(t *testing.T, c *cluster, name string, args ...string) *replica {
	t.Helper()
	r := &replica{t: t, c: c, name: name, args: args, stop: make(chan struct{})}
	if err := r.launch(); err != nil {
		t.Fatal(err)
	}
	r.wg.Add(1)
	go r.supervise()
	t.Cleanup(func() {
		close(r.stop)
		r.wg.Wait()
	})
	return r
}

func (r *replica) launch() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, err := launchManager(r.t, r.c, fmt.Sprintf("%s-run-%d", r.name, r.runs), r.args...)
	if err != nil {
		return err
	}
	r.proc, r.dead = p, false
	r.runs++
	return nil
}

func (r *replica) supervise() {
	defer r.wg.Done()
	for {
		r.mu.Lock()
		p := r.proc
		r.mu.Unlock()
		select {
		case <-r.stop:
			return
		case <-p.done:
		}
		r.mu.Lock()
		dead := r.dead
		if !dead {
			r.exits++
		}
		r.mu.Unlock()
		if dead {
			select {
			case <-r.stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			continue
		}
		// The back-off a kubelet starts with.
		time.Sleep(time.Second)
		if err := r.launch(); err != nil {
			r.t.Errorf("%s: starting again: %v", r.name, err)
			return
		}
	}
}

// kill kills the replica's process with SIGKILL; it is not started again.
func (r *replica) kill() {
	r.mu.Lock()
	r.dead = true
	p := r.proc
	r.mu.Unlock()
	p.kill()
}

// leads says whether the replica's current process has acquired the lease.
func (r *replica) leads() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.dead && !r.proc.exited() && r.proc.logHas(acquired)
}

func (r *replica) restarts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.exits
}
