package render

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/metalwire/metalwire/pkg/render/yamlout"
)

// NetworkData is a rendered OpenStack network_data.json. Marshalled, its objects' keys are
// sorted, like upstream CAPM3's output, so old and new Secrets diff cleanly.
type NetworkData struct {
	Links    []Link    `json:"links"`
	Networks []Network `json:"networks"`
	Services []Service `json:"services"`
}

// Link types besides the Ethernet ones (phy, tap, ...), which are written as the template gives.
const (
	LinkBond   = "bond"
	LinkVLAN   = "vlan"
	LinkBridge = "bridge"
)

// Link is one layer 2 interface. Which fields are written depends on Type: a VLAN's MAC is
// vlan_mac_address, every other link's ethernet_mac_address.
type Link struct {
	Type string
	ID   string
	// Name is the interface name cloud-init gives the link; empty lets it choose.
	Name string
	MTU  int
	MAC  string

	BondMode           string
	BondXmitHashPolicy string
	BondLinks          []string

	// Bridge marks a link of the template's bridges. An ethernet may have type "bridge" too (a
	// network_data.json link type); only Bridge says the link has members.
	Bridge      bool
	BridgeLinks []string

	VLANID   int
	VLANLink string

	// Params are extra bond_<name> / bridge_<name> settings, keyed by their full name.
	Params map[string]json.RawMessage
}

// MarshalJSON writes the link's network_data.json keys, sorted.
func (l Link) MarshalJSON() ([]byte, error) {
	fields := map[string]any{
		"id":   l.ID,
		"type": l.Type,
	}
	if l.MTU != 0 {
		fields["mtu"] = l.MTU
	}
	if l.Name != "" {
		fields["name"] = l.Name
	}
	switch {
	case l.Type == LinkVLAN:
		fields["vlan_mac_address"] = l.MAC
		fields["vlan_id"] = l.VLANID
		fields["vlan_link"] = l.VLANLink
	case l.Type == LinkBond:
		fields["ethernet_mac_address"] = l.MAC
		fields["bond_mode"] = l.BondMode
		fields["bond_links"] = nonNil(l.BondLinks)
		if l.BondXmitHashPolicy != "" {
			fields["bond_xmit_hash_policy"] = l.BondXmitHashPolicy
		}
	case l.Bridge:
		fields["ethernet_mac_address"] = l.MAC
		fields["bridge_links"] = nonNil(l.BridgeLinks)
	default:
		fields["ethernet_mac_address"] = l.MAC
	}
	for k, v := range l.Params {
		fields[k] = v
	}
	return json.Marshal(fields) // encoding/json sorts map keys
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Network types.
const (
	NetworkIPv4      = "ipv4"
	NetworkIPv6      = "ipv6"
	NetworkIPv4DHCP  = "ipv4_dhcp"
	NetworkIPv6DHCP  = "ipv6_dhcp"
	NetworkIPv6SLAAC = "ipv6_slaac"
)

// Network is one layer 3 configuration of a link. Fields are declared in key order.
type Network struct {
	ID        string  `json:"id"`
	IPAddress string  `json:"ip_address,omitempty"`
	Link      string  `json:"link"`
	Netmask   string  `json:"netmask,omitempty"`
	NetworkID string  `json:"network_id"`
	Routes    []Route `json:"routes"`
	Type      string  `json:"type"`

	// PrefixLen is Netmask as a length, for the netplan and nmstate writers.
	PrefixLen int `json:"-"`
}

// IPv4 reports whether the network is an IPv4 one.
func (n Network) IPv4() bool { return n.Type == NetworkIPv4 || n.Type == NetworkIPv4DHCP }

// Route is a route of a network. Fields are declared in key order.
type Route struct {
	Gateway  string    `json:"gateway"`
	Netmask  string    `json:"netmask"`
	Network  string    `json:"network"`
	Services []Service `json:"services"`

	// PrefixLen is Netmask as a length, for the netplan and nmstate writers.
	PrefixLen int `json:"-"`
}

// Service is a DNS server. Fields are declared in key order.
type Service struct {
	Address string `json:"address"`
	Type    string `json:"type"`
}

// ServiceDNS is the only service type network_data.json has.
const ServiceDNS = "dns"

// JSON writes network_data.json, indented for people reading the Secret.
func (n *NetworkData) JSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(n); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// YAML writes network_data.json as YAML, the form CAPM3 stores in the networkData Secret.
func (n *NetworkData) YAML() ([]byte, error) {
	return yamlout.Marshal(n)
}

// linkByID returns the link with the given id.
func (n *NetworkData) linkByID(id string) (Link, bool) {
	i := slices.IndexFunc(n.Links, func(l Link) bool { return l.ID == id })
	if i < 0 {
		return Link{}, false
	}
	return n.Links[i], true
}

// paramValue decodes a bond or bridge parameter for the YAML writers: numbers stay numbers.
func paramValue(raw json.RawMessage) any {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	if f, ok := v.(float64); ok && f == float64(int64(f)) {
		return int64(f)
	}
	return v
}
