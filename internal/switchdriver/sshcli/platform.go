package sshcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/scrapli/scrapligo/driver/network"
	"github.com/scrapli/scrapligo/driver/options"
	"github.com/scrapli/scrapligo/platform"
	"github.com/scrapli/scrapligo/response"
	"github.com/scrapli/scrapligo/transport"
	"golang.org/x/crypto/ssh"
)

// Platform mode: scrapligo's network driver over a shell channel of the session's own SSH
// connection. The connection (host key pinned, credentials from the Secret) stays this package's;
// scrapligo never sees a password or a key, so none can reach its logs. scrapligo brings what a
// network CLI needs: the prompt of each privilege level, escalating to configuration and back,
// paging off on open (the platform's network-on-open), and failed-when-contains.

// platformCLI is one open scrapligo driver.
type platformCLI struct {
	drv *network.Driver
	tr  *shellTransport
}

func (c *platformCLI) close() {
	// Close runs the platform's on-close (back to exec, "exit"); a dead connection just fails it.
	_ = c.drv.Close()
}

// cliFor opens the scrapligo driver on first use. A connection the switch closed is not reused:
// the next call opens a new shell on the same SSH connection, or fails if that is gone too.
func (s *Session) cliFor() (*platformCLI, error) {
	if s.cli != nil && s.cli.tr.alive() {
		return s.cli, nil
	}
	if s.cli != nil {
		s.cli.close()
		s.cli = nil
	}
	tr := &shellTransport{client: s.client}
	var def any = s.set.Platform
	if len(s.set.PlatformDefinition) > 0 {
		def = s.set.PlatformDefinition
	}
	p, err := platform.NewPlatform(def, s.ep.Address,
		options.WithCustomTransport(tr),
		options.WithTimeoutOps(s.timeout),
		options.WithTermWidth(511),
	)
	if err != nil {
		return nil, fmt.Errorf("switch %s: scrapligo platform %s: %w", s.ep.Switch, s.set.NetworkOS, err)
	}
	drv, err := p.GetNetworkDriver()
	if err != nil {
		return nil, fmt.Errorf("switch %s: scrapligo platform %s: %w", s.ep.Switch, s.set.NetworkOS, err)
	}
	if err := drv.Open(); err != nil {
		return nil, fmt.Errorf("switch %s: opening the CLI (prompt, privilege, paging off): %w", s.ep.Switch, s.connErr(tr, err))
	}
	s.cli = &platformCLI{drv: drv, tr: tr}
	return s.cli, nil
}

// connErr prefers "the switch closed the connection" over the timeout scrapligo reports when a
// read found the channel gone.
func (s *Session) connErr(tr *shellTransport, err error) error {
	if !tr.alive() {
		return fmt.Errorf("the switch closed the connection: %w", err)
	}
	return err
}

// showPlatform runs lines at the default privilege level (exec or enable) and returns their
// outputs; the first output an error pattern matches fails with the switch's message.
func (s *Session) showPlatform(_ context.Context, lines []string) ([]string, error) {
	cli, err := s.cliFor()
	if err != nil {
		return nil, err
	}
	outs := make([]string, 0, len(lines))
	for _, line := range lines {
		r, err := cli.drv.SendCommand(line)
		if err := s.checkResponse(cli, line, r, err); err != nil {
			return outs, err
		}
		outs = append(outs, cleanOutput(r.Result))
	}
	return outs, nil
}

// configurePlatform sends a batch: the lines at the configuration privilege level, then the
// Commit lines there, then Save at the default level. A failed line stops the batch; the
// Rollback lines then leave the candidate configuration as it was.
func (s *Session) configurePlatform(_ context.Context, lines []string) error {
	cli, err := s.cliFor()
	if err != nil {
		return err
	}
	priv := s.set.ConfigPrivilege
	if priv == "" {
		priv = "configuration"
	}
	if err := cli.drv.AcquirePriv(priv); err != nil {
		return fmt.Errorf("switch %s: entering configuration mode: %w", s.ep.Switch, s.connErr(cli.tr, err))
	}
	for _, line := range append(append([]string{}, lines...), s.set.Commit...) {
		r, err := cli.drv.Driver.SendCommand(line)
		if err := s.checkResponse(cli, line, r, err); err != nil {
			for _, rb := range s.set.Rollback {
				if _, rbErr := cli.drv.Driver.SendCommand(rb); rbErr != nil {
					break
				}
			}
			return err
		}
	}
	for _, line := range s.set.Save {
		r, err := cli.drv.SendCommand(line)
		if err := s.checkResponse(cli, line, r, err); err != nil {
			return err
		}
	}
	return nil
}

// checkResponse turns a failed send or an output with an error line into an error naming the
// command and quoting the switch.
func (s *Session) checkResponse(cli *platformCLI, line string, r *response.Response, err error) error {
	if err != nil {
		return fmt.Errorf("switch %s: command %q: %w", s.ep.Switch, line, s.connErr(cli.tr, err))
	}
	if msg := s.matchError(r.Result); msg != "" {
		// The lines before the error say where (Junos' "[edit ...]" and the reason).
		return &CommandError{Switch: s.ep.Switch, Command: line, Output: trim(strings.TrimSuffix(strings.Join(strings.Fields(cleanOutput(r.Result)), " "), " [edit]"))}
	}
	if r.Failed != nil {
		return &CommandError{Switch: s.ep.Switch, Command: line, Output: trim(r.Result)}
	}
	return nil
}

// shellTransport is a scrapligo transport (transport.Implementation) on an interactive shell of
// an SSH connection that is already open and authenticated.
type shellTransport struct {
	client *ssh.Client

	mu   sync.Mutex
	sess *ssh.Session
	in   io.WriteCloser
	out  io.Reader
	dead bool
}

var _ transport.Implementation = &shellTransport{}

// errClosed stands in for io.EOF: scrapligo's read loop ends quietly on EOF and the command
// waiting for a prompt would wait until its timeout; any other error reaches it at once.
var errClosed = errors.New("the switch closed the SSH session")

// Open requests a terminal (wide, so the switch does not wrap) and starts the shell.
func (t *shellTransport) Open(a *transport.Args) error {
	sess, err := t.client.NewSession()
	if err != nil {
		return fmt.Errorf("opening an SSH channel: %w", err)
	}
	modes := ssh.TerminalModes{ssh.ECHO: 1, ssh.TTY_OP_ISPEED: 115200, ssh.TTY_OP_OSPEED: 115200}
	if err := sess.RequestPty("xterm", a.TermHeight, a.TermWidth, modes); err != nil {
		_ = sess.Close()
		return fmt.Errorf("requesting a terminal: %w", err)
	}
	in, err := sess.StdinPipe()
	if err != nil {
		_ = sess.Close()
		return err
	}
	out, err := sess.StdoutPipe()
	if err != nil {
		_ = sess.Close()
		return err
	}
	if err := sess.Shell(); err != nil {
		_ = sess.Close()
		return fmt.Errorf("starting a shell: %w", err)
	}
	t.mu.Lock()
	t.sess, t.in, t.out, t.dead = sess, in, out, false
	t.mu.Unlock()
	return nil
}

// Close ends the shell channel; the SSH connection stays open for the session.
func (t *shellTransport) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sess == nil {
		return nil
	}
	err := t.sess.Close()
	t.sess, t.dead = nil, true
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// IsAlive says whether the shell is open.
func (t *shellTransport) IsAlive() bool { return t.alive() }

func (t *shellTransport) alive() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sess != nil && !t.dead
}

// Read reads what the switch sent.
func (t *shellTransport) Read(n int) ([]byte, error) {
	b := make([]byte, n)
	got, err := t.out.Read(b)
	if err != nil {
		t.mu.Lock()
		t.dead = true
		t.mu.Unlock()
		if errors.Is(err, io.EOF) {
			return nil, errClosed
		}
		return nil, err
	}
	return b[:got], nil
}

// Write types to the switch.
func (t *shellTransport) Write(b []byte) error {
	_, err := t.in.Write(b)
	return err
}

// cleanOutput drops the carriage returns a terminal adds.
func cleanOutput(s string) string { return strings.ReplaceAll(s, "\r", "") }
