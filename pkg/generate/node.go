package generate

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"

	"sigs.k8s.io/yaml"

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
	list, err := interfaceList([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("%s.networkConfig, rendered for %s: %w", u.Path, node.Name, err)
	}
	doc, err := yaml.Marshal(map[string]any{"network_config": list})
	if err != nil {
		return nil, err
	}
	if err := osnetconfig.Validate(doc); err != nil {
		return nil, fmt.Errorf("%s.networkConfig, rendered for %s: %w; fix the template", u.Path, node.Name, err)
	}
	if err := osnetconfig.CheckMapping(node.Mapping); err != nil {
		return nil, fmt.Errorf("%s.macMapping.%s: %w", u.Path, node.Key, err)
	}
	mapping, err := yaml.Marshal(map[string]any{"interface_mapping": node.Mapping})
	if err != nil {
		return nil, err
	}
	return &NodeConfig{Unit: u, Node: node, Addresses: addrs, OSNetConfig: doc, Mapping: mapping, Interfaces: list}, nil
}

// interfaceList reads a rendered template: a list, or `network_config:` holding one.
func interfaceList(text []byte) ([]any, error) {
	var doc any
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return nil, fmt.Errorf("is not YAML: %w", err)
	}
	switch d := doc.(type) {
	case []any:
		return d, nil
	case map[string]any:
		if list, ok := d["network_config"].([]any); ok && len(d) == 1 {
			return list, nil
		}
		return nil, fmt.Errorf("is a map with keys %v; os-net-config wants a list of interfaces, or network_config: holding one", slices.Sorted(maps.Keys(d)))
	}
	return nil, fmt.Errorf("is not a list of interfaces; os-net-config wants one")
}
