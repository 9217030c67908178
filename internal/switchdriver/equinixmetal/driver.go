// Package equinixmetal is the fabric driver of networkOS equinix-metal: a NetworkDevice switch is
// an Equinix Metal project in one metro, its ports are the project's devices' ports, named
// "<device id>/bond0", "<device id>/eth0" and "<device id>/eth1", and the VLANs are the project's
// virtual networks in the metro, by VXLAN id. metalwire brings its own VLANs: it looks them up
// and never creates or deletes one.
//
// A port's access or trunk configuration becomes the device's network type (see TargetType);
// the change from one type to another is a series of Metal API calls in the order the API
// requires (see Plan), VLANs are attached and detached with the batch endpoint
// /ports/{id}/vlan-assignments/batches and each batch is followed until completed or failed.
// A batch still queued or in progress when a session starts (the manager restarted while
// following it) is found again and followed before anything else is sent.
//
// It talks to the API through github.com/equinix/equinix-sdk-go/services/metalv1. The API token
// comes from the switch's Secret and is sent only in the X-Auth-Token header: no error, log line
// or condition carries it.
package equinixmetal

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/equinix/equinix-sdk-go/services/metalv1"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// NetworkOS is the NetworkDevice networkOS value this driver serves.
const NetworkOS = "equinix-metal"

// DefaultAddress is the Metal API's address; a switch's address overrides it (tests point it at
// a local fake).
const DefaultAddress = "https://api.equinix.com/metal/v1"

// Driver is the equinix-metal driver. The zero value is ready to use.
type Driver struct {
	// HTTPClient sends the API requests; nil: a client with a 30s timeout.
	HTTPClient *http.Client
	// PollInterval is how often a VLAN batch is read while it runs; zero: 2s.
	PollInterval time.Duration
}

// New returns the driver with its defaults.
func New() *Driver { return &Driver{} }

// NetworkOS implements fabric.Driver.
func (d *Driver) NetworkOS() string { return NetworkOS }

// DefaultPort implements fabric.Driver: the API is HTTPS.
func (d *Driver) DefaultPort() int { return 443 }

// Connect implements fabric.Driver. It checks the project is readable with the token, so a
// refused token shows at once.
func (d *Driver) Connect(ctx context.Context, ep fabric.Endpoint) (fabric.Session, error) {
	if ep.Project == "" || ep.Metro == "" {
		return nil, fmt.Errorf("switch %s: equinixMetal.projectID and equinixMetal.metro are required for networkOS equinix-metal", ep.Switch)
	}
	if ep.Credentials.Token == "" {
		return nil, fmt.Errorf("switch %s: no API token; name an Opaque Secret with a token key in credentialsRef", ep.Switch)
	}
	cfg := metalv1.NewConfiguration()
	cfg.Servers = metalv1.ServerConfigurations{{URL: apiURL(ep)}}
	cfg.HTTPClient = d.HTTPClient
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	cfg.UserAgent = "metalwire"
	cfg.AddDefaultHeader("X-Auth-Token", ep.Credentials.Token)
	poll := d.PollInterval
	if poll == 0 {
		poll = 2 * time.Second
	}
	s := &session{api: metalv1.NewAPIClient(cfg), ep: ep, poll: poll}
	if err := s.loadProject(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// apiURL is the API's base URL: the switch's address when it is a URL, https://<address>/metal/v1
// for a bare host name.
func apiURL(ep fabric.Endpoint) string {
	addr := ep.Address
	if addr == "" {
		return DefaultAddress
	}
	if strings.HasPrefix(addr, "http://") || strings.HasPrefix(addr, "https://") {
		return strings.TrimSuffix(addr, "/")
	}
	if ep.Port != 0 && ep.Port != 443 {
		addr = fmt.Sprintf("%s:%d", addr, ep.Port)
	}
	return "https://" + addr + "/metal/v1"
}
