package vendorssh_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/metalwire/metalwire/internal/switchdriver/sshcli"
	"github.com/metalwire/metalwire/internal/switchtest/vendortest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// Logging in: an unpinned or changed host key is refused with the fingerprint the switch showed;
// a refused password never shows in the error; the version is read from the switch.
func TestLoginAndHostKeys(t *testing.T) {
	versions := map[string]string{"eos": "EOS 4.31.2F", "nxos": "NX-OS 10.3(4a)", "junos": "Junos 23.4R2.13",
		"sonic": "SONiC.202311.1", "dellos10": "OS10 10.5.6.0", "cumulus": "Cumulus Linux 5.9.0"}
	for name, v := range vendors() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := vendortest.Start(t, name, v.ports[0])
			drv := sshcli.Driver{Set: v.set, CommandTimeout: 10 * time.Second}
			ctx := context.Background()

			ep := endpoint(srv)
			ep.HostKey = ""
			_, err := drv.Connect(ctx, ep)
			var hk *fabric.HostKeyError
			if !errors.As(err, &hk) || hk.Fingerprint != srv.Fingerprint || hk.Pinned {
				t.Fatalf("no key pinned: %v, want a HostKeyError with %s", err, srv.Fingerprint)
			}
			other := vendortest.Start(t, name)
			ep.HostKey = other.HostKey
			if _, err := drv.Connect(ctx, ep); !errors.As(err, &hk) || !hk.Pinned || hk.Fingerprint != srv.Fingerprint {
				t.Fatalf("another key pinned: %v", err)
			}

			ep = endpoint(srv)
			ep.Credentials.Password = "not-the-password-7f3a"
			_, err = drv.Connect(ctx, ep)
			if err == nil || !strings.Contains(err.Error(), "refused") || strings.Contains(err.Error(), "7f3a") {
				t.Fatalf("wrong password: %v", err)
			}

			sess, err := drv.Connect(ctx, endpoint(srv))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = sess.Close() }()
			info, err := sess.Info(ctx)
			if err != nil || info.Version != versions[name] {
				t.Fatalf("Info = %+v, %v, want %s", info, err, versions[name])
			}
		})
	}
}

// The CLIs page long output until told not to: the emulated switch does (a raw session sees
// --More--), and the drivers read a switch of 60 ports, far more than a screen, because
// scrapligo's platform turns paging off first.
func TestPagingTurnedOff(t *testing.T) {
	for _, name := range []string{"eos", "nxos", "junos", "dellos10"} {
		v := vendors()[name]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ports := make([]string, 60)
			for i := range ports {
				ports[i] = fmt.Sprintf("%s%d", strings.TrimRight(v.ports[0], "0123456789"), i+1)
			}
			srv := vendortest.Start(t, name, ports...)
			show := map[string]string{"eos": "show running-config", "nxos": "show running-config", "junos": "show configuration", "dellos10": "show running-configuration"}[name]
			if out := rawShell(t, srv, show); !strings.Contains(out, "--More--") {
				t.Fatalf("%s without paging off: no --More-- in %q", show, out)
			}
			sess, err := sshcli.Driver{Set: v.set, CommandTimeout: 10 * time.Second}.Connect(context.Background(), endpoint(srv))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = sess.Close() }()
			st, err := sess.Read(context.Background(), ports)
			if err != nil || len(st.Ports) != len(ports) {
				t.Fatalf("read of %d ports: %d read, %v", len(ports), len(st.Ports), err)
			}
		})
	}
}

// rawShell logs in, types one line and returns what comes back within a second.
func rawShell(t *testing.T, srv *vendortest.Server, line string) string {
	t.Helper()
	c, err := ssh.Dial("tcp", fmt.Sprintf("%s:%d", srv.Host, srv.Port), &ssh.ClientConfig{User: srv.User,
		Auth: []ssh.AuthMethod{ssh.Password(srv.Password)}, HostKeyCallback: ssh.InsecureIgnoreHostKey()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.RequestPty("xterm", 24, 80, ssh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	in, _ := sess.StdinPipe()
	out, _ := sess.StdoutPipe()
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"enable", line} {
		if _, err := io.WriteString(in, l+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	got := make(chan string, 1)
	go func() {
		var b strings.Builder
		buf := make([]byte, 4096)
		deadline := time.Now().Add(time.Second)
		for time.Now().Before(deadline) && !strings.Contains(b.String(), "--More--") {
			n, err := out.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		got <- b.String()
	}()
	select {
	case s := <-got:
		return s
	case <-time.After(3 * time.Second):
		return ""
	}
}
