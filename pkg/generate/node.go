package generate

import (
	"fmt"
	"net/netip"

	"github.com/metalwire/metalwire/pkg/render/osnetconfig"
)

// Paths on the host of the files a node's KubeadmConfig writes.
const (
	ConfigPath  = "/etc/os-net-config/config.yaml"
	MappingPath = "/etc/os-net-config/mapping.yaml"
	NetplanPath = "/etc/netplan/60-metalwire.yaml"
)

// Formats of the network configuration a node is given.
const (
	FormatOSNetConfig = "os-net-config"
	FormatNetplan     = "netplan"
)

// NodeConfig is one node's rendered network configuration.
type NodeConfig struct {
	Unit *Unit
	Node *Node
	// Addresses by network.
	Addresses map[string]netip.Addr
	// OSNetConfig is /etc/os-net-config/config.yaml: `network_config:` holding the rendered list.
	OSNetConfig []byte
	// Mapping is /etc/os-net-config/mapping.yaml: `interface_mapping: {em0: <MAC>, ...}`.
	Mapping []byte
	// Interfaces is the rendered network_config list, parsed.
	Interfaces []any
}

// NodeConfig renders the node's template with its addresses in state and checks the result
// against os-net-config's schema.
func (f *File) NodeConfig(u *Unit, node *Node, state State) (*NodeConfig, error) {
	addrs := state.Addresses(node.Name)
	for _, net := range u.Networks() {
		if _, ok := addrs[net]; !ok {
			return nil, fmt.Errorf("%s has no address in network %s; allocate before rendering", node.Name, net)
		}
	}
	text, err := f.Render(u, node, addrs)
	if err != nil {
		return nil, err
	}
	doc, list, err := osnetconfig.Config(text)
	if err != nil {
		return nil, fmt.Errorf("%s.networkConfig, rendered for %s: %w; fix the template", u.Path, node.Name, err)
	}
	mapping, err := osnetconfig.MappingFile(node.Mapping)
	if err != nil {
		return nil, fmt.Errorf("%s.macMapping.%s: %w", u.Path, node.Key, err)
	}
	return &NodeConfig{Unit: u, Node: node, Addresses: addrs, OSNetConfig: doc, Mapping: mapping, Interfaces: list}, nil
}
