package openvswitch

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"
)

// DefaultKeepIdle is how long New's driver keeps a switch's connection open after its last
// session.
const DefaultKeepIdle = 2 * time.Minute

// conns keeps at most one idle connection per remote between sessions: OVSDB connections
// (ovsdbConn) and OpenFlow ones (ofConn). It is transport, not switch state: a kept OVSDB
// connection holds a socket and the schema the server sent when it was opened (which only
// changes when ovsdb-server restarts, and that closes the socket), and no rows; a kept OpenFlow
// connection a socket whose hello was exchanged. Sessions read with select and flow-desc
// requests, never a monitor, so every session still reads the switch as it is at that moment.
//
// Opening an OVSDB connection costs the dial (a TLS handshake on ssl:) and get_schema (the
// Open_vSwitch schema is 27 kB of JSON, checked against the driver's model; openConn): most of
// a short session's CPU. Opening an OpenFlow connection costs ovs-vswitchd a connection set up
// and torn down, about 1.5 ms of its CPU with 50 LACP bonds on the bridge (docs/fabric-scale.md). The
// controller opens a session per switch per reconcile.
type conns[C keptConn] struct {
	keep time.Duration
	mu   sync.Mutex
	idle map[string]*idleConn[C]
}

// keptConn is a connection conns can keep: alive says whether it may still be used (false once
// the other end closed it, as far as the connection can tell without a call).
type keptConn interface {
	alive() bool
	Close()
}

type idleConn[C keptConn] struct {
	client C
	timer  *time.Timer
}

func newConns[C keptConn](keep time.Duration) *conns[C] {
	return &conns[C]{keep: keep, idle: map[string]*idleConn[C]{}}
}

// take hands out the idle connection to key, if one is still connected; the caller owns it.
func (p *conns[C]) take(key string) (C, bool) {
	var none C
	p.mu.Lock()
	ic, ok := p.idle[key]
	delete(p.idle, key)
	p.mu.Unlock()
	if !ok {
		return none, false
	}
	ic.timer.Stop()
	if !ic.client.alive() {
		ic.client.Close()
		return none, false
	}
	return ic.client, true
}

// put keeps c as key's idle connection for the keep time, then closes it. A connection that is
// no longer connected, or one more than the one already kept, is closed now.
func (p *conns[C]) put(key string, c C) {
	if !c.alive() {
		c.Close()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.idle[key]; ok {
		c.Close()
		return
	}
	ic := &idleConn[C]{client: c}
	ic.timer = time.AfterFunc(p.keep, func() {
		// The connection is the expiry's to close only while it is still kept: take (or
		// closeAll) may have had it out of idle between the timer firing and this lock, and
		// then it is a session's (or closed already).
		p.mu.Lock()
		mine := p.idle[key] == ic
		if mine {
			delete(p.idle, key)
		}
		p.mu.Unlock()
		if mine {
			c.Close()
		}
	})
	p.idle[key] = ic
}

// closeAll closes every idle connection.
func (p *conns[C]) closeAll() {
	p.mu.Lock()
	idle := p.idle
	p.idle = map[string]*idleConn[C]{}
	p.mu.Unlock()
	for _, ic := range idle {
		ic.timer.Stop()
		ic.client.Close()
	}
}

// connKey tells connections apart by everything that opened them: the remote and, for ssl:,
// the client certificate, key and CA (a rotated Secret gets a connection of its own).
func connKey(remote string, certPEM, keyPEM, caPEM []byte) string {
	if len(certPEM) == 0 && len(keyPEM) == 0 && len(caPEM) == 0 {
		return remote
	}
	h := sha256.New()
	for _, b := range [][]byte{certPEM, keyPEM, caPEM} {
		_, _ = h.Write(b)
		_, _ = h.Write([]byte{0})
	}
	return remote + " " + hex.EncodeToString(h.Sum(nil))
}
