package vendortest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// Server is one emulated switch: an SSH server on a loopback port whose CLI behaves like OS.
type Server struct {
	// OS is the networkOS the server emulates (eos, nxos, junos, sonic, dellos10, cumulus).
	OS   string
	Host string
	Port int
	// HostKey is the server's public key in authorized_keys form; Fingerprint is its SHA256.
	HostKey     string
	Fingerprint string
	User        string
	Password    string

	// Config is the switch's running configuration.
	Config *Config

	cli      personality
	ln       net.Listener
	sshCfg   *ssh.ServerConfig
	mu       sync.Mutex
	logins   int
	commands []string
	failOn   string
	dropAt   string
	conns    map[*ssh.ServerConn]bool
	// staged is configuration edited but not yet applied: Junos' shared candidate, NVUE's
	// pending revision. nil: none (it starts as a copy of Config on first edit).
	staged *Config
	// loginDelay and commandDelay slow the switch down (SetDelays).
	loginDelay, commandDelay time.Duration
	wg                       sync.WaitGroup
	closed                   bool
	closeErr                 error
}

// personality is one OS's CLI.
type personality interface {
	// banner and prompt of a new interactive session.
	newShell() shellState
	// line handles one line typed in an interactive session; out is printed before the next prompt.
	line(s *Server, st *shellState, line string) (out string, exit bool)
	// prompt for the shell's current mode.
	prompt(st *shellState) string
	// exec runs one command of an exec channel (Linux-based switches): its output and status.
	exec(s *Server, cmd string) (out string, status int)
	// errorFor is the OS's answer to a command it refuses (FailOn).
	errorFor(cmd string) string
}

// shellState is one interactive session: the CLI mode and whether paging is off.
type shellState struct {
	mode     string
	context  string   // the interface or VLAN being configured, as typed
	ports    []string // the interfaces being configured (several for a range)
	noPaging bool
	// aclV6: the access list being configured is an IPv6 one (OS10's prompt says so).
	aclV6 bool
	// private is Junos' private candidate ("configure private"), gone with the session.
	private *Config
}

// Start runs a switch of networkOS os with the given front-panel ports (all access ports of VLAN
// 1, VLAN 1 defined) until the test ends.
func Start(t testing.TB, os string, ports ...string) *Server {
	t.Helper()
	s, err := NewServer(os, ports...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// NewServer starts a switch (see Start); Close stops it.
func NewServer(os string, ports ...string) (*Server, error) {
	cli, ok := personalities[os]
	if !ok {
		return nil, fmt.Errorf("vendortest: no emulation of networkOS %q", os)
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{OS: os, Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port, cli: cli, ln: ln,
		HostKey:     strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey()))),
		Fingerprint: ssh.FingerprintSHA256(signer.PublicKey()),
		User:        "admin", Password: "pw-" + randomHex(8),
		Config: NewConfig(ports...), conns: map[*ssh.ServerConn]bool{}}
	s.sshCfg = &ssh.ServerConfig{PasswordCallback: func(c ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
		if c.User() == s.User && string(pw) == s.Password {
			return nil, nil
		}
		return nil, errors.New("access denied")
	}}
	s.sshCfg.AddHostKey(signer)
	s.wg.Add(1)
	go s.serve()
	return s, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Close stops the server and ends every connection.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return s.closeErr
	}
	s.closed = true
	s.closeErr = s.ln.Close()
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return s.closeErr
}

// Logins is the number of SSH logins so far.
func (s *Server) Logins() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logins
}

// Commands returns every line of a change received so far, as typed (mode changes, commits and
// saves included; shows, session setup and logging out left out), and forgets them.
func (s *Server) Commands() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.commands
	s.commands = nil
	return out
}

// SetDelays makes the switch answer a login after login and each command after command, as a
// slow real switch does (a benchmark's).
func (s *Server) SetDelays(login, command time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loginDelay, s.commandDelay = login, command
}

func (s *Server) delays() (login, command time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loginDelay, s.commandDelay
}

// stagedConfig returns the staged configuration, starting one from Config if there is none.
func (s *Server) stagedConfig() *Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.staged == nil {
		s.staged = s.Config.Clone()
	}
	return s.staged
}

// takeStaged returns the staged configuration (nil if none) and drops it.
func (s *Server) takeStaged() *Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.staged
	s.staged = nil
	return st
}

// FailOn makes the switch refuse the first command containing substr with its own error
// message, as it would refuse a command it does not accept; nothing of that command is applied.
func (s *Server) FailOn(substr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failOn = substr
}

// DropOn makes the switch close the SSH connection when a command containing substr arrives,
// once, without applying it: a switch that reboots or a link that fails half-way through a batch.
func (s *Server) DropOn(substr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropAt = substr
}

// command records a configuration command and says whether to refuse it (the error text) or
// drop the connection.
func (s *Server) command(cmd string) (refuse string, drop bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dropAt != "" && strings.Contains(cmd, s.dropAt) {
		s.dropAt = ""
		return "", true
	}
	s.commands = append(s.commands, cmd)
	if s.failOn != "" && strings.Contains(cmd, s.failOn) {
		s.failOn = ""
		return s.cli.errorFor(cmd), false
	}
	return "", false
}

func (s *Server) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.handle(c)
		}()
	}
}

func (s *Server) handle(c net.Conn) {
	login, _ := s.delays()
	time.Sleep(login)
	conn, chans, reqs, err := ssh.NewServerConn(c, s.sshCfg)
	if err != nil {
		_ = c.Close()
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = conn.Close()
		return
	}
	s.logins++
	s.conns[conn] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, conn)
		s.mu.Unlock()
		_ = conn.Close()
	}()
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "session channels only")
			continue
		}
		ch, chReqs, err := nc.Accept()
		if err != nil {
			return
		}
		go s.session(conn, ch, chReqs)
	}
}

// session serves one channel: a shell on a terminal, or one exec.
func (s *Server) session(conn *ssh.ServerConn, ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer func() { _ = ch.Close() }()
	for req := range reqs {
		switch req.Type {
		case "pty-req", "env", "window-change":
			_ = req.Reply(true, nil)
		case "shell":
			_ = req.Reply(true, nil)
			s.shell(conn, ch)
			return
		case "exec":
			var p struct{ Command string }
			if err := ssh.Unmarshal(req.Payload, &p); err != nil {
				_ = req.Reply(false, nil)
				return
			}
			_ = req.Reply(true, nil)
			_, delay := s.delays()
			time.Sleep(delay)
			if refuse, drop := s.execCommand(p.Command); drop {
				_ = conn.Close()
				return
			} else if refuse != "" {
				_, _ = io.WriteString(ch.Stderr(), refuse+"\n")
				_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{1}))
				return
			}
			out, status := s.cli.exec(s, p.Command)
			_, _ = io.WriteString(ch, out)
			_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{uint32(status)})) //nolint:gosec // 0 or 1
			return
		default:
			_ = req.Reply(false, nil)
		}
	}
}

// execCommand records an exec command that changes configuration (not a read).
func (s *Server) execCommand(cmd string) (string, bool) {
	if isRead(cmd) {
		return "", false
	}
	return s.command(cmd)
}

func isRead(cmd string) bool {
	for _, p := range []string{"show ", "sonic-cfggen ", "nv show", "nv config show", "nv --version"} {
		if strings.HasPrefix(cmd, p) {
			return true
		}
	}
	return false
}

// pageLines is the terminal height a switch pages at until paging is turned off.
const pageLines = 24

// shell is an interactive CLI: it echoes what is typed, runs each line, pages long output
// until paging is off, and prints the prompt of the current mode.
func (s *Server) shell(conn *ssh.ServerConn, ch ssh.Channel) {
	st := s.cli.newShell()
	write := func(text string) bool {
		_, err := io.WriteString(ch, strings.ReplaceAll(text, "\n", "\r\n"))
		return err == nil
	}
	if !write(s.cli.prompt(&st)) {
		return
	}
	buf := make([]byte, 1)
	var line []byte
	for {
		if _, err := ch.Read(buf); err != nil {
			return
		}
		switch b := buf[0]; b {
		case '\r', '\n':
			if !write("\n") {
				return
			}
			cmd := strings.TrimSpace(string(line))
			line = line[:0]
			_, delay := s.delays()
			time.Sleep(delay)
			out, exit, drop := s.shellLine(&st, cmd)
			if drop {
				_ = conn.Close()
				return
			}
			if !s.page(ch, &st, out, write) {
				return
			}
			if exit {
				return
			}
			if !write(s.cli.prompt(&st)) {
				return
			}
		default:
			line = append(line, b)
			if !write(string(b)) {
				return
			}
		}
	}
}

// shellLine runs one typed line: configuration lines are recorded and may be refused or dropped.
func (s *Server) shellLine(st *shellState, cmd string) (out string, exit, drop bool) {
	if cmd == "" {
		return "", false, false
	}
	if isConfigLine(st, cmd) {
		refuse, drop := s.command(cmd)
		if drop {
			return "", false, true
		}
		if refuse != "" {
			return refuse + "\n", false, false
		}
	}
	out, exit = s.cli.line(s, st, cmd)
	return out, exit, false
}

// isConfigLine says whether a line is part of a change: anything but reading (show), setting up
// the session (terminal, set cli, enable) and logging out.
func isConfigLine(st *shellState, cmd string) bool {
	for _, p := range []string{"show ", "terminal ", "set cli ", "enable", "disable"} {
		if strings.HasPrefix(cmd, p) {
			return false
		}
	}
	if cmd == "exit" && !strings.HasPrefix(st.mode, "config") {
		return false // logging out
	}
	return true
}

// page prints out a screen at a time with --More-- until paging is off, as the real CLIs do:
// a space shows the next screen, q ends the output.
func (s *Server) page(ch ssh.Channel, st *shellState, out string, write func(string) bool) bool {
	lines := strings.SplitAfter(out, "\n")
	if st.noPaging || len(lines) <= pageLines {
		return write(out)
	}
	key := make([]byte, 1)
	for len(lines) > 0 {
		n := min(pageLines, len(lines))
		if !write(strings.Join(lines[:n], "")) {
			return false
		}
		lines = lines[n:]
		if len(lines) == 0 {
			break
		}
		if !write(" --More-- ") {
			return false
		}
		if _, err := ch.Read(key); err != nil {
			return false
		}
		if !write("\r          \r") {
			return false
		}
		if key[0] == 'q' {
			break
		}
	}
	return true
}

var personalities = map[string]personality{}
