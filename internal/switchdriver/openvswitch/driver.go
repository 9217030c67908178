package openvswitch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// NetworkOS is the NetworkDevice networkOS value this driver serves.
const NetworkOS = "openvswitch"

// DefaultPort is the OVSDB management port (IANA).
const DefaultPort = 6640

// DefaultDialTimeout bounds opening a session, so an unreachable switch fails fast.
const DefaultDialTimeout = 5 * time.Second

// Driver opens OVSDB sessions to Open vSwitch switches. The zero Driver opens a connection per
// session; New's keeps each switch's connection open between sessions (see conns).
type Driver struct {
	// DialTimeout bounds connecting and reading the schema; 0 means DefaultDialTimeout.
	DialTimeout time.Duration
	// conns keeps idle OVSDB connections, ofConns idle OpenFlow connections; nil: every session
	// dials its own and closes it.
	conns   *conns[*ovsdbConn]
	ofConns *conns[ofConn]
}

var _ fabric.Driver = Driver{}

// New returns a Driver that keeps a switch's connection open for DefaultKeepIdle after a
// session ends, for the next session to the same remote with the same credentials.
func New() Driver {
	return Driver{conns: newConns[*ovsdbConn](DefaultKeepIdle), ofConns: newConns[ofConn](DefaultOpenFlowKeepIdle)}
}

// DefaultOpenFlowKeepIdle is how long New's driver keeps a bridge's OpenFlow connection open
// after its last session: long enough to carry a burst's passes (a second or so apart), and
// short, because a kept connection reads nothing between calls and so answers no probe of the
// switch's while idle (one the switch dropped meanwhile is replaced: Session.ofRead).
const DefaultOpenFlowKeepIdle = 20 * time.Second

// CloseIdle closes the connections kept between sessions.
func (d Driver) CloseIdle() {
	if d.conns != nil {
		d.conns.closeAll()
	}
	if d.ofConns != nil {
		d.ofConns.closeAll()
	}
}

// NetworkOS returns "openvswitch".
func (Driver) NetworkOS() string { return NetworkOS }

// SetsPortMTU implements fabric.PortMTUSetter: mtu_request of the port's interface.
func (Driver) SetsPortMTU() bool { return true }

// SetsACLs implements fabric.ACLSetter: access lists as OpenFlow flows under their cookie.
func (Driver) SetsACLs() bool { return true }

// SetsPortState implements fabric.PortStateSetter: a port's administrative state by OpenFlow
// port-mod, read back from the Interface's admin_state.
func (Driver) SetsPortState() bool { return true }

// DefaultPort returns 6640.
func (Driver) DefaultPort() int { return DefaultPort }

// Connect opens an OVSDB session to the switch at ep, over the connection kept from the last
// session when there is one.
func (d Driver) Connect(ctx context.Context, ep fabric.Endpoint) (fabric.Session, error) {
	remote, err := Remote(ep)
	if err != nil {
		return nil, err
	}
	key := connKey(remote, ep.Credentials.CertPEM, ep.Credentials.KeyPEM, ep.Credentials.CAPEM)
	sess := &Session{switchName: ep.Switch, bridge: ep.Bridge}
	sess.openFlow, sess.noOpenFlow = OpenFlowRemote(ep, remote)
	if d.ofConns != nil && sess.openFlow != "" {
		sess.ofConns = d.ofConns
	}
	if d.conns != nil {
		sess.release = func(c *ovsdbConn) { d.conns.put(key, c) }
		if c, ok := d.conns.take(key); ok {
			sess.client = c
			sess.redial = func(ctx context.Context) (*ovsdbConn, error) { return d.dial(ctx, ep, remote) }
			return sess, nil
		}
	}
	if sess.client, err = d.dial(ctx, ep, remote); err != nil {
		return nil, err
	}
	return sess, nil
}

// dial opens a new OVSDB connection and reads the server's schema.
func (d Driver) dial(ctx context.Context, ep fabric.Endpoint, remote string) (*ovsdbConn, error) {
	var cfg *tls.Config
	if strings.HasPrefix(remote, "ssl:") {
		var err error
		if cfg, err = tlsConfig(ep); err != nil {
			return nil, err
		}
	}
	timeout := d.DialTimeout
	if timeout == 0 {
		timeout = DefaultDialTimeout
	}
	dialCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := openConn(dialCtx, remote, cfg)
	if err != nil {
		if errors.Is(dialCtx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("switch %s: OVSDB remote %s did not answer within %s: %w", ep.Switch, remote, timeout, err)
		}
		return nil, fmt.Errorf("switch %s: cannot open OVSDB remote %s: %w", ep.Switch, remote, err)
	}
	return c, nil
}

// Remote is the OVSDB remote for ep: ep.Address when it is already one ("tcp:...", "ssl:...",
// "unix:..."), else "ssl:" (with a client certificate in the credentials) or "tcp:" to
// Address and Port (DefaultPort when 0).
func Remote(ep fabric.Endpoint) (string, error) {
	addr := strings.TrimSpace(ep.Address)
	if addr == "" {
		return "", fmt.Errorf("switch %s: address is empty: set an IP address, a DNS name or an OVSDB remote (tcp:HOST:PORT, ssl:HOST:PORT, unix:PATH)", ep.Switch)
	}
	for _, scheme := range []string{"tcp:", "ssl:", "unix:"} {
		if strings.HasPrefix(addr, scheme) {
			return addr, nil
		}
	}
	if i := strings.Index(addr, ":"); i > 0 && net.ParseIP(addr) == nil && !strings.Contains(addr, "]") {
		return "", fmt.Errorf("switch %s: address %q is neither an IP address, a DNS name nor an OVSDB remote: write the port in port, or a full remote (tcp:HOST:PORT, ssl:HOST:PORT, unix:PATH)", ep.Switch, addr)
	}
	port := ep.Port
	if port == 0 {
		port = DefaultPort
	}
	scheme := "tcp:"
	if len(ep.Credentials.CertPEM) > 0 {
		scheme = "ssl:"
	}
	return scheme + net.JoinHostPort(strings.Trim(addr, "[]"), strconv.Itoa(port)), nil
}

// tlsConfig presents the credentials' client certificate and trusts servers whose certificate
// the credentials' CA signed. Like Open vSwitch's own SSL remotes (ovs-pki), it checks the
// certificate chain, not a host name: switch certificates rarely name their management address.
func tlsConfig(ep fabric.Endpoint) (*tls.Config, error) {
	cr := ep.Credentials
	if len(cr.CertPEM) == 0 || len(cr.KeyPEM) == 0 || len(cr.CAPEM) == 0 {
		return nil, fmt.Errorf("switch %s: an ssl: OVSDB remote needs tls.crt, tls.key and ca.crt in the credentials Secret (type kubernetes.io/tls)", ep.Switch)
	}
	cert, err := tls.X509KeyPair(cr.CertPEM, cr.KeyPEM)
	if err != nil {
		return nil, fmt.Errorf("switch %s: credentials tls.crt/tls.key: %w", ep.Switch, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(cr.CAPEM) {
		return nil, fmt.Errorf("switch %s: credentials ca.crt holds no PEM certificate", ep.Switch)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
		// The chain is verified below against the CA; only the host name check is skipped.
		// VerifyConnection (unlike VerifyPeerCertificate) also runs on resumed sessions.
		InsecureSkipVerify: true, //nolint:gosec // verified in VerifyConnection
		VerifyConnection: func(cs tls.ConnectionState) error {
			certs := cs.PeerCertificates
			if len(certs) == 0 {
				return errors.New("the switch sent no certificate")
			}
			inter := x509.NewCertPool()
			for _, c := range certs[1:] {
				inter.AddCert(c)
			}
			if _, err := certs[0].Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
				return fmt.Errorf("switch %s: its certificate is not signed by the credentials' ca.crt: %w", ep.Switch, err)
			}
			return nil
		},
	}, nil
}
