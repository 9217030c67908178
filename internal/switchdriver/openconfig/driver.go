// Package openconfig is the switch driver for networkOS "openconfig": switches that serve gNMI
// with the OpenConfig models (SONiC, EOS, SR Linux, NX-OS). A batch is one gNMI Set, one
// transaction on the switch: VLANs under the default network instance
// (/network-instances/network-instance[name=default]/vlans/vlan[vlan-id=N]/config), ports'
// switching under /interfaces/interface[name=P]/ethernet/switched-vlan/config (openconfig-vlan),
// each port's config replaced whole; bonds as aggregate interfaces with openconfig-lacp, named
// from the switch's declared aggregates (lacp.go). Get reads the same paths back as JSON_IETF. The connection is
// TLS, verified against the credentials Secret's ca.crt (the system's roots without one), with
// its tls.crt and tls.key as the client certificate when present, and the username and password
// sent as gNMI call metadata.
package openconfig

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// NetworkOS is the NetworkDevice networkOS value this driver serves.
const NetworkOS = "openconfig"

// DefaultPort is gNMI's IANA-assigned port.
const DefaultPort = 9339

// DefaultTimeout bounds each gNMI call.
const DefaultTimeout = 30 * time.Second

// Driver is the gNMI driver.
type Driver struct {
	// Timeout bounds the connection and each call (0: DefaultTimeout).
	Timeout time.Duration
}

var _ fabric.Driver = Driver{}

// New returns the driver.
func New() Driver { return Driver{} }

// NetworkOS is "openconfig".
func (Driver) NetworkOS() string { return NetworkOS }

// SetsPortState implements fabric.PortStateSetter: a port's openconfig-interfaces config/enabled.
func (Driver) SetsPortState() bool { return true }

// SetsACLs implements fabric.ACLSetter: openconfig-acl acl-sets bound to a port.
func (Driver) SetsACLs() bool { return true }

// DefaultPort is 9339.
func (Driver) DefaultPort() int { return DefaultPort }

// Connect opens a TLS gRPC connection and checks it with a Capabilities call, so an unreachable
// switch, a refused certificate or refused credentials show here.
func (d Driver) Connect(ctx context.Context, ep fabric.Endpoint) (fabric.Session, error) {
	if ep.Address == "" {
		return nil, fmt.Errorf("switch %s: address is empty: set the switch's management IP address or DNS name", ep.Switch)
	}
	timeout := d.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	host := strings.Trim(ep.Address, "[]")
	tlsCfg := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	cr := ep.Credentials
	if len(cr.CAPEM) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cr.CAPEM) {
			return nil, fmt.Errorf("switch %s: the credentials Secret's ca.crt holds no PEM certificate", ep.Switch)
		}
		tlsCfg.RootCAs = pool
	}
	if len(cr.CertPEM) > 0 || len(cr.KeyPEM) > 0 {
		cert, err := tls.X509KeyPair(cr.CertPEM, cr.KeyPEM)
		if err != nil {
			// The parser's message never quotes the key.
			return nil, fmt.Errorf("switch %s: the credentials Secret's tls.crt and tls.key are not a usable certificate and key: %w", ep.Switch, err)
		}
		tlsCfg.Certificates = []tls.Certificate{cert}
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(credentials.NewTLS(tlsCfg))}
	if cr.Username != "" || cr.Password != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(login{user: cr.Username, password: cr.Password}))
	}
	port := ep.Port
	if port == 0 {
		port = DefaultPort
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("switch %s: gNMI client for %s: %w", ep.Switch, addr, err)
	}
	s := &Session{conn: conn, client: gnmi.NewGNMIClient(conn), ep: ep, timeout: timeout}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	caps, err := s.client.Capabilities(cctx, &gnmi.CapabilityRequest{})
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("switch %s: gNMI at %s: %w", ep.Switch, addr, callError(err))
	}
	if !jsonIETF(caps) {
		_ = conn.Close()
		return nil, fmt.Errorf("switch %s: the gNMI server does not offer JSON_IETF encoding, which metalwire uses", ep.Switch)
	}
	s.version = caps.GetGNMIVersion()
	return s, nil
}

func jsonIETF(caps *gnmi.CapabilityResponse) bool {
	for _, e := range caps.GetSupportedEncodings() {
		if e == gnmi.Encoding_JSON_IETF {
			return true
		}
	}
	return false
}

// login sends the username and password as gNMI call metadata, over TLS only.
type login struct{ user, password string }

func (l login) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"username": l.user, "password": l.password}, nil
}

func (login) RequireTransportSecurity() bool { return true }

// callError keeps the switch's message and gRPC's code, dropping the rest of its wrapping.
func callError(err error) error {
	if st, ok := status.FromError(err); ok {
		return fmt.Errorf("%s (%s)", st.Message(), st.Code())
	}
	return err
}
