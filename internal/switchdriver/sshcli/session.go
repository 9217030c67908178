package sshcli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// Session is one SSH connection to a switch; each Read and Apply runs over it.
type Session struct {
	client  *ssh.Client
	set     CommandSet
	ep      fabric.Endpoint
	timeout time.Duration
	// changes counts the batches that sent configuration (the idempotence measure).
	changes int
	// cli is the scrapligo driver of platform mode, opened on first use.
	cli *platformCLI
}

var _ fabric.Session = &Session{}

// Changes is the number of batches this session sent to the switch. An empty batch, or one the
// switch already matches, sends none.
func (s *Session) Changes() int { return s.changes }

// Close logs out.
func (s *Session) Close() error {
	if s.cli != nil {
		s.cli.close()
	}
	return s.client.Close()
}

// Info runs the command set's version command.
func (s *Session) Info(ctx context.Context) (fabric.Info, error) {
	if s.set.VersionCommand == "" {
		return fabric.Info{}, nil
	}
	outs, err := s.run(ctx, []string{s.set.VersionCommand})
	if err != nil {
		return fabric.Info{}, err
	}
	v := strings.TrimSpace(outs[0])
	if s.set.ParseVersion != nil {
		v = s.set.ParseVersion(outs[0])
	}
	return fabric.Info{Version: v}, nil
}

// Read runs the command set's read commands and parses their output.
func (s *Session) Read(ctx context.Context, ports []string) (fabric.State, error) {
	if s.set.ReadCommands == nil {
		return fabric.State{}, fmt.Errorf("switch %s: networkOS %s cannot read ports back: %w", s.ep.Switch, s.set.NetworkOS, fabric.ErrUnsupported)
	}
	outs, err := s.run(ctx, s.set.ReadCommands(s.ep, ports))
	if err != nil {
		return fabric.State{}, err
	}
	st, err := s.set.ParseState(s.ep, ports, outs)
	if err != nil {
		return fabric.State{}, fmt.Errorf("switch %s: reading the switch's answer: %w", s.ep.Switch, err)
	}
	return st, nil
}

// Apply checks the batch, reads the ports it names (refusing the batch if one is missing),
// drops the changes the switch already shows, and sends the rest in one go: one exec per line,
// or one shell with config mode entered, the lines, config mode left and the config saved.
func (s *Session) Apply(ctx context.Context, batch fabric.Batch) error {
	for i, c := range batch {
		if err := checkChange(i, c); err != nil {
			return fmt.Errorf("switch %s: %w", s.ep.Switch, err)
		}
	}
	if len(batch) == 0 {
		return nil
	}
	todo := batch
	var have fabric.State
	if s.set.ReadCommands != nil {
		names := portsOf(batch)
		read := slices.Concat(names, lagsOf(batch), membersOf(batch))
		if s.set.ACLs {
			read = append(read, aclsOf(batch)...)
		}
		st, err := s.Read(ctx, read)
		if err != nil {
			return err
		}
		have = st
		var missing []string
		for _, n := range names {
			if _, ok := st.Ports[n]; !ok {
				missing = append(missing, fmt.Sprintf("%q", n))
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("switch %s: no port %s on the switch%s; nothing was changed", s.ep.Switch, strings.Join(missing, ", "), bridgeNote(s.ep))
		}
		todo = nil
		for _, c := range batch {
			if !fabric.InPlace(c, st) {
				todo = append(todo, c)
			}
		}
	}
	if len(todo) == 0 {
		return nil
	}
	lines, err := s.set.Render(s.ep, have, todo)
	if err != nil {
		return fmt.Errorf("switch %s: %w", s.ep.Switch, err)
	}
	if len(lines) == 0 {
		return nil
	}
	s.changes++
	switch s.set.Mode {
	case ModePlatform:
		return s.configurePlatform(ctx, lines)
	case ModeShell:
		lines = append(append(append(append([]string{}, s.set.ConfigEnter...), lines...), s.set.ConfigExit...), s.set.Save...)
	default:
		lines = append(append([]string{}, lines...), s.set.Save...)
	}
	_, err = s.run(ctx, lines)
	return err
}

func bridgeNote(ep fabric.Endpoint) string {
	if ep.Bridge == "" {
		return ""
	}
	return " (bridge " + ep.Bridge + ")"
}

// CommandError is a command the switch refused: its exit status or an error pattern matched.
type CommandError struct {
	Switch  string
	Command string
	// Output is what the switch answered (trimmed).
	Output string
}

// Error names the command, its middle left out when it is long (SONiC writes a whole access
// list in one sonic-cfggen line), so the host's state stays readable; Command keeps it whole.
func (e *CommandError) Error() string {
	cmd := e.Command
	if len(cmd) > maxShownCommand {
		cmd = fmt.Sprintf("%s ... (%d characters) ... %s", cmd[:maxShownCommand*2/3], len(cmd), cmd[len(cmd)-maxShownCommand/3:])
	}
	return fmt.Sprintf("switch %s: command %q failed: %s", e.Switch, cmd, e.Output)
}

// maxShownCommand is the longest command an error quotes whole.
const maxShownCommand = 240

// run sends the lines and returns each one's output.
func (s *Session) run(ctx context.Context, lines []string) ([]string, error) {
	switch s.set.Mode {
	case ModeShell:
		return s.runShell(ctx, lines)
	case ModePlatform:
		return s.showPlatform(ctx, lines)
	}
	outs := make([]string, 0, len(lines))
	for _, line := range lines {
		out, err := s.exec(ctx, line)
		if err != nil {
			return outs, err
		}
		outs = append(outs, out)
	}
	return outs, nil
}

// exec runs one line on an exec channel: an error for a non-zero exit status or an error
// pattern in its output.
func (s *Session) exec(ctx context.Context, line string) (string, error) {
	sess, err := s.client.NewSession()
	if err != nil {
		return "", fmt.Errorf("switch %s: opening an SSH channel: %w", s.ep.Switch, err)
	}
	defer func() { _ = sess.Close() }()
	var stdout, stderr bytes.Buffer
	sess.Stdout, sess.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	go func() { done <- sess.Run(line) }()
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = sess.Close()
		return "", fmt.Errorf("switch %s: command %q did not finish within %s", s.ep.Switch, line, s.timeout)
	}
	both := stdout.String() + stderr.String()
	if msg := s.matchError(both); msg != "" {
		return "", &CommandError{Switch: s.ep.Switch, Command: line, Output: msg}
	}
	if err != nil {
		var exit *ssh.ExitError
		if errors.As(err, &exit) {
			return "", &CommandError{Switch: s.ep.Switch, Command: line, Output: fmt.Sprintf("exit status %d: %s", exit.ExitStatus(), trim(stderr.String()))}
		}
		return "", fmt.Errorf("switch %s: command %q: %w", s.ep.Switch, line, err)
	}
	return stdout.String(), nil
}

// runShell types the lines into one interactive shell, reading each one's output up to the
// prompt, and stops at the first line whose output matches an error pattern.
func (s *Session) runShell(ctx context.Context, lines []string) ([]string, error) {
	sess, err := s.client.NewSession()
	if err != nil {
		return nil, fmt.Errorf("switch %s: opening an SSH channel: %w", s.ep.Switch, err)
	}
	defer func() { _ = sess.Close() }()
	// A wide terminal, so the switch does not wrap long lines into the output.
	if err := sess.RequestPty("vt100", 0, 511, ssh.TerminalModes{ssh.ECHO: 0}); err != nil {
		return nil, fmt.Errorf("switch %s: requesting a terminal: %w", s.ep.Switch, err)
	}
	stdin, err := sess.StdinPipe()
	if err != nil {
		return nil, err
	}
	out := &syncBuffer{}
	sess.Stdout, sess.Stderr = out, out
	if err := sess.Shell(); err != nil {
		return nil, fmt.Errorf("switch %s: starting a shell: %w", s.ep.Switch, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := s.readToPrompt(ctx, out, "login"); err != nil {
		return nil, err
	}
	for _, line := range s.set.Setup {
		if err := s.shellLine(ctx, stdin, out, line, nil); err != nil {
			return nil, err
		}
	}
	outs := make([]string, 0, len(lines))
	for _, line := range lines {
		if err := s.shellLine(ctx, stdin, out, line, &outs); err != nil {
			return outs, err
		}
	}
	return outs, nil
}

func (s *Session) shellLine(ctx context.Context, stdin io.Writer, out *syncBuffer, line string, outs *[]string) error {
	if _, err := io.WriteString(stdin, line+"\n"); err != nil {
		return fmt.Errorf("switch %s: sending %q: %w", s.ep.Switch, line, err)
	}
	text, err := s.readToPrompt(ctx, out, line)
	if err != nil {
		return err
	}
	// Drop the echoed command line and the trailing prompt.
	text = strings.TrimPrefix(strings.TrimLeft(text, "\r\n"), line)
	if loc := s.set.Prompt.FindStringIndex(text); loc != nil {
		text = text[:loc[0]]
	}
	if msg := s.matchError(text); msg != "" {
		return &CommandError{Switch: s.ep.Switch, Command: line, Output: msg}
	}
	if outs != nil {
		*outs = append(*outs, text)
	}
	return nil
}

// readToPrompt waits until the output ends with the prompt and takes what came so far.
func (s *Session) readToPrompt(ctx context.Context, out *syncBuffer, what string) (string, error) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		text, ok := out.takeIf(func(text string) bool {
			return s.set.Prompt.MatchString(strings.TrimRight(text, "\r\n")) || s.set.Prompt.MatchString(text)
		})
		if ok {
			return strings.ReplaceAll(text, "\r", ""), nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("switch %s: no prompt after %q within %s; the output so far: %s", s.ep.Switch, what, s.timeout, trim(text))
		case <-tick.C:
		}
	}
}

// matchError returns the first output line an error pattern matches.
func (s *Session) matchError(text string) string {
	for _, l := range strings.Split(strings.ReplaceAll(text, "\r", ""), "\n") {
		for _, re := range s.set.Errors {
			if re.MatchString(l) {
				return strings.TrimSpace(l)
			}
		}
	}
	return ""
}

func trim(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 500 {
		s = s[:500] + "..."
	}
	return s
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// takeIf empties the buffer and returns what it held when ready says so, in one step, so no
// byte written meanwhile is lost.
func (b *syncBuffer) takeIf(ready func(string) bool) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	text := b.buf.String()
	if !ready(text) {
		return text, false
	}
	b.buf.Reset()
	return text, true
}
