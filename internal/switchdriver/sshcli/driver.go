package sshcli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// DefaultPort is the SSH port.
const DefaultPort = 22

// Default timeouts: an unreachable switch fails fast; a slow CLI still finishes.
const (
	DefaultDialTimeout    = 5 * time.Second
	DefaultCommandTimeout = 60 * time.Second
)

// Driver is a fabric.Driver for the switches one CommandSet describes.
type Driver struct {
	Set CommandSet
	// DialTimeout bounds the TCP connection and the SSH handshake (0: DefaultDialTimeout).
	DialTimeout time.Duration
	// CommandTimeout bounds each command's output (0: DefaultCommandTimeout).
	CommandTimeout time.Duration
}

var _ fabric.Driver = Driver{}

// NetworkOS is the command set's networkOS value.
func (d Driver) NetworkOS() string { return d.Set.NetworkOS }

// SetsPortMTU implements fabric.PortMTUSetter: the command set's PortMTU.
func (d Driver) SetsPortMTU() bool { return d.Set.PortMTU }

// SetsPortState implements fabric.PortStateSetter: the command set's PortState.
func (d Driver) SetsPortState() bool { return d.Set.PortState }

// SetsACLs implements fabric.ACLSetter: the command set's ACLs.
func (d Driver) SetsACLs() bool { return d.Set.ACLs }

// DefaultPort is 22.
func (Driver) DefaultPort() int { return DefaultPort }

// Connect logs in to the switch over SSH, refusing a host key other than ep.HostKey.
func (d Driver) Connect(ctx context.Context, ep fabric.Endpoint) (fabric.Session, error) {
	if err := d.Set.Validate(); err != nil {
		return nil, err
	}
	if ep.Address == "" {
		return nil, fmt.Errorf("switch %s: address is empty: set the switch's management IP address or DNS name", ep.Switch)
	}
	pinned, err := parseHostKeys(ep.HostKey)
	if err != nil {
		return nil, fmt.Errorf("switch %s: hostKey: %w", ep.Switch, err)
	}
	auth, err := authMethods(ep.Credentials)
	if err != nil {
		return nil, fmt.Errorf("switch %s: %w", ep.Switch, err)
	}
	timeout := d.DialTimeout
	if timeout == 0 {
		timeout = DefaultDialTimeout
	}
	var keyErr *fabric.HostKeyError
	cfg := &ssh.ClientConfig{
		User: ep.Credentials.Username,
		Auth: auth,
		HostKeyCallback: func(_ string, _ net.Addr, key ssh.PublicKey) error {
			for _, p := range pinned {
				if bytes.Equal(p.Marshal(), key.Marshal()) {
					return nil
				}
			}
			keyErr = &fabric.HostKeyError{Switch: ep.Switch, Fingerprint: ssh.FingerprintSHA256(key), Pinned: len(pinned) > 0}
			return keyErr
		},
		// Ask for the pinned key's algorithm, so a switch with several host keys shows that one.
		HostKeyAlgorithms: algorithmsOf(pinned),
		Timeout:           timeout,
	}
	port := ep.Port
	if port == 0 {
		port = DefaultPort
	}
	addr := net.JoinHostPort(strings.Trim(ep.Address, "[]"), strconv.Itoa(port))
	dialCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(dialCtx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("switch %s: cannot reach %s: %w", ep.Switch, addr, err)
	}
	_ = conn.SetDeadline(time.Now().Add(timeout))
	c, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
	if err != nil {
		_ = conn.Close()
		switch {
		case keyErr != nil:
			return nil, keyErr
		case strings.Contains(err.Error(), "unable to authenticate"):
			return nil, fmt.Errorf("switch %s: SSH login as %q refused: check the username and password or private key in the credentials Secret", ep.Switch, ep.Credentials.Username)
		case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
			return nil, fmt.Errorf("switch %s: SSH handshake with %s did not finish within %s", ep.Switch, addr, timeout)
		}
		return nil, fmt.Errorf("switch %s: SSH handshake with %s: %w", ep.Switch, addr, err)
	}
	_ = conn.SetDeadline(time.Time{})
	cmdTimeout := d.CommandTimeout
	if cmdTimeout == 0 {
		cmdTimeout = DefaultCommandTimeout
	}
	return &Session{client: ssh.NewClient(c, chans, reqs), set: d.Set, ep: ep, timeout: cmdTimeout}, nil
}

// parseHostKeys reads pinned keys, one a line, in authorized_keys form ("ssh-ed25519 AAAA...")
// or as ssh-keyscan prints them ("host ssh-ed25519 AAAA...").
func parseHostKeys(text string) ([]ssh.PublicKey, error) {
	var keys []ssh.PublicKey
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(line)); err == nil {
			keys = append(keys, k)
			continue
		}
		_, _, k, _, _, err := ssh.ParseKnownHosts([]byte(line))
		if err != nil {
			return nil, fmt.Errorf("line %d is not a public key (want \"ssh-ed25519 AAAA...\" as ssh-keyscan prints it): %w", n+1, err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

func algorithmsOf(keys []ssh.PublicKey) []string {
	var algs []string
	for _, k := range keys {
		if k.Type() == ssh.KeyAlgoRSA {
			algs = append(algs, ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA)
			continue
		}
		algs = append(algs, k.Type())
	}
	return algs
}

// authMethods logs in with the private key (kubernetes.io/ssh-auth) or the password
// (kubernetes.io/basic-auth; also offered as keyboard-interactive, which many switches use).
func authMethods(cr fabric.Credentials) ([]ssh.AuthMethod, error) {
	if cr.Username == "" {
		return nil, errors.New("the credentials Secret has no username")
	}
	var auth []ssh.AuthMethod
	if len(cr.PrivateKey) > 0 {
		signer, err := ssh.ParsePrivateKey(cr.PrivateKey)
		if err != nil {
			// The parser's message never quotes the key.
			return nil, fmt.Errorf("the credentials Secret's ssh-privatekey is not a usable unencrypted private key: %w", err)
		}
		auth = append(auth, ssh.PublicKeys(signer))
	}
	if cr.Password != "" {
		pw := cr.Password
		auth = append(auth, ssh.Password(pw), ssh.KeyboardInteractive(func(_, _ string, questions []string, _ []bool) ([]string, error) {
			answers := make([]string, len(questions))
			for i := range answers {
				answers[i] = pw
			}
			return answers, nil
		}))
	}
	if len(auth) == 0 {
		return nil, errors.New("the credentials Secret has neither a password nor an ssh-privatekey")
	}
	return auth, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
