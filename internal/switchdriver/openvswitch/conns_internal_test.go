package openvswitch

import (
	"sync/atomic"
	"testing"
	"time"
)

// fakeConn is a kept connection that records being closed.
type fakeConn struct{ closed atomic.Bool }

func (c *fakeConn) alive() bool { return !c.closed.Load() }
func (c *fakeConn) Close()      { c.closed.Store(true) }

// TestTakenConnectionIsNotClosedByItsExpiry: when a kept connection's keep time runs out just as
// a session takes it (the expiry fired, but take got the lock first), the connection is the
// session's: the expiry must not close it under the session, mid-call.
func TestTakenConnectionIsNotClosedByItsExpiry(t *testing.T) {
	const keep = time.Millisecond
	for attempt := 0; attempt < 50; attempt++ {
		p := newConns[*fakeConn](keep)
		c := &fakeConn{}
		p.put("r", c)
		// Hold the lock past the keep time: the expiry fires and waits for the lock. take, run
		// right after the unlock by the goroutine that held it, usually gets it first.
		p.mu.Lock()
		time.Sleep(20 * keep)
		p.mu.Unlock()
		got, ok := p.take("r")
		if !ok {
			continue // the expiry got the lock first and closed the connection: no race this time
		}
		time.Sleep(20 * keep) // let the expiry run
		if got.closed.Load() {
			t.Fatalf("attempt %d: the connection take handed out was closed by its expiry", attempt)
		}
		got.Close()
		return
	}
	t.Fatal("the expiry got the lock first in every attempt: the race was never set up")
}
