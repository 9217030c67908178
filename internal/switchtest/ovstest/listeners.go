package ovstest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// ListenTCP opens a TCP listener on the host's address and port inside its namespace, which
// accepts every connection and closes it; it is closed when the test ends. It stands in for a
// service on the host (sshd on 22, a web server on 80) without any program to install.
func ListenTCP(t testing.TB, h *Host, port int) {
	t.Helper()
	checksumInSoftware(t, h)
	var l net.Listener
	err := InNamespace(h.Namespace, func() (err error) {
		l, err = net.Listen("tcp4", net.JoinHostPort(h.Addr, strconv.Itoa(port)))
		return err
	})
	if err != nil {
		t.Fatalf("listen on %s:%d in %s: %v", h.Addr, port, h.Namespace, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = l.Close(); <-done })
}

// ConnectsTCP says whether a TCP connection from the host to addr:port is accepted, trying up
// to tries times with a one-second timeout each (user-space Open vSwitch learns slowly).
func ConnectsTCP(t testing.TB, from *Host, addr string, port, tries int) bool {
	t.Helper()
	checksumInSoftware(t, from)
	for i := 0; i < tries; i++ {
		err := InNamespace(from.Namespace, func() error {
			c, err := net.DialTimeout("tcp4", net.JoinHostPort(addr, strconv.Itoa(port)), time.Second)
			if err == nil {
				_ = c.Close()
			}
			return err
		})
		if err == nil {
			return true
		}
	}
	return false
}

// checksumInSoftware turns off the transmit checksum offload of the host's card. A veth leaves
// a TCP checksum for the hardware to fill in; user-space Open vSwitch forwards the frame as it
// got it, so without this the receiver drops every TCP segment (ping is unaffected).
func checksumInSoftware(t testing.TB, h *Host) {
	t.Helper()
	Require(t, "ethtool")
	run(t, nil, "ip", "netns", "exec", h.Namespace, "ethtool", "-K", "eth0", "tx", "off")
}

// InNamespace runs fn on an OS thread moved into the named network namespace: sockets fn opens
// belong to that namespace for their whole life. The thread is returned to the original
// namespace after; if that fails it is never reused (the goroutine exits still locked to it,
// which ends the thread).
func InNamespace(ns string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			errc <- err
			return
		}
		defer func() { _ = orig.Close() }()
		target, err := os.Open("/run/netns/" + ns)
		if err != nil {
			errc <- err
			return
		}
		defer func() { _ = target.Close() }()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("enter namespace %s: %w", ns, err)
			return
		}
		err = fn()
		if restoreErr := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); restoreErr != nil {
			errc <- errors.Join(err, fmt.Errorf("leave namespace %s: %w", ns, restoreErr))
			return
		}
		runtime.UnlockOSThread()
		errc <- err
	}()
	return <-errc
}

// Ofctl runs ovs-ofctl against a bridge of this switch (through the bridge's management socket
// in the switch's directory) and returns its output: what a person checking the flows would see.
func (s *Switch) Ofctl(t testing.TB, args ...string) string {
	t.Helper()
	return run(t, s.env(), "ovs-ofctl", args...)
}

// MgmtRemote is the OpenFlow remote of a bridge's management socket ("unix:DIR/BR.mgmt"), the
// one ovs-ofctl uses; it exists once ovs-vswitchd has configured the bridge (WaitMgmt).
func (s *Switch) MgmtRemote(bridge string) string {
	return "unix:" + filepath.Join(s.Dir, bridge+".mgmt")
}

// WaitMgmt waits until ovs-vswitchd has created the bridge's management socket.
func (s *Switch) WaitMgmt(t testing.TB, bridge string) {
	t.Helper()
	path := filepath.Join(s.Dir, bridge+".mgmt")
	waitFor(t, "OpenFlow management socket "+path, func() bool {
		_, err := os.Stat(path)
		return err == nil
	})
}
