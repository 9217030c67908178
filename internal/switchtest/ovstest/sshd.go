package ovstest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// SSHServer is an sshd of the test's own on a loopback port, with a user of its own that logs
// in with a password or a key: "the switch's" management plane.
type SSHServer struct {
	Host string
	Port int
	// HostKey is the server's public host key in authorized_keys form; Fingerprint its SHA256
	// fingerprint as ssh-keygen -l prints it.
	HostKey     string
	Fingerprint string
	// User logs in with Password or with the private key ClientKey (PEM).
	User      string
	Password  string
	ClientKey []byte

	authorized string
}

// AuthorizeKey lets the user log in with one more key (its public half in authorized_keys
// form), as a switch administrator adds a rotated key.
func (s *SSHServer) AuthorizeKey(t testing.TB, pub string) {
	t.Helper()
	f, err := os.OpenFile(s.authorized, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(pub + "\n"); err != nil {
		t.Fatal(err)
	}
}

// StartSSHD starts sshd as root with a temporary configuration (-f config -D -e), a host key
// made for the test and a user made for the test. env is set in every session (sshd_config
// SetEnv): a test points ovs-vsctl at its own database with OVS_RUNDIR, so the command line is
// the same as on a real switch. Everything goes when the test ends.
func StartSSHD(t testing.TB, env map[string]string) *SSHServer {
	t.Helper()
	Require(t, "sshd", "ssh-keygen", "useradd", "userdel", "chpasswd")
	sshd, err := exec.LookPath("sshd") // sshd re-executes itself: it needs an absolute path
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "mwsshd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { //nolint:gosec // sshd reads authorized_keys here as the test user
		t.Fatal(err)
	}
	// Debian's service creates the privilege separation directory; a bare sshd needs it too.
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil { //nolint:gosec // the mode Debian's sshd service gives it
		t.Fatal(err)
	}

	hostKey := filepath.Join(dir, "host_ed25519")
	run(t, nil, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", hostKey)
	pub, err := os.ReadFile(hostKey + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	// The fingerprint as a person gets it: ssh-keygen -l prints "256 SHA256:... comment (ED25519)".
	fingerprint := strings.Fields(run(t, nil, "ssh-keygen", "-l", "-E", "sha256", "-f", hostKey+".pub"))[1]

	s := &SSHServer{Host: "127.0.0.1", Port: FreePort(t), HostKey: strings.TrimSpace(string(pub)),
		Fingerprint: fingerprint, User: "mw" + randomHex(4), Password: "pw-" + randomHex(8)}
	clientPub, clientKey := NewSSHKey(t)
	s.ClientKey = clientKey
	authorized := filepath.Join(dir, "authorized_keys")
	s.authorized = authorized
	if err := os.WriteFile(authorized, []byte(clientPub+"\n"), 0o644); err != nil { //nolint:gosec // sshd reads it as the test user
		t.Fatal(err)
	}

	run(t, nil, "useradd", "--no-create-home", "--home-dir", dir, "--shell", "/bin/sh", s.User)
	t.Cleanup(func() { _ = exec.Command("userdel", s.User).Run() })
	chpasswd := exec.Command("chpasswd")
	chpasswd.Stdin = strings.NewReader(s.User + ":" + s.Password + "\n")
	if out, err := chpasswd.CombinedOutput(); err != nil {
		t.Fatalf("chpasswd: %v: %s", err, out)
	}

	cfg := make([]string, 0, 12+len(env))
	cfg = append(cfg,
		fmt.Sprintf("Port %d", s.Port),
		"ListenAddress "+s.Host,
		"HostKey "+hostKey,
		"PidFile none",
		"AuthorizedKeysFile "+authorized,
		"StrictModes no",
		"UsePAM no",
		"PasswordAuthentication yes",
		"KbdInteractiveAuthentication no",
		"PubkeyAuthentication yes",
		"AllowUsers "+s.User,
		"MaxStartups 50",
	)
	for k, v := range env {
		cfg = append(cfg, fmt.Sprintf("SetEnv %s=%s", k, v))
	}
	config := filepath.Join(dir, "sshd_config")
	if err := os.WriteFile(config, []byte(strings.Join(cfg, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sshd, "-f", config, "-D", "-e")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sshd: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("sshd output:\n%s", tail(out.String(), 3000))
		}
	})
	addr := net.JoinHostPort(s.Host, fmt.Sprint(s.Port))
	waitFor(t, "sshd on "+addr, func() bool {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			return false
		}
		_ = c.Close()
		return true
	})
	return s
}

// NewSSHKey makes an ed25519 key: its public half in authorized_keys form and its private
// half as PEM.
func NewSSHKey(t testing.TB) (string, []byte) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sshPub))), pem.EncodeToMemory(block)
}
