package generate

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"

	"github.com/metalwire/metalwire/pkg/render/osnetconfig"
)

// networkRef is a network a template names: ip['net0'], ip.net0, config['net0'] or config.net0.
type networkRef struct {
	network string
	expr    string
	ip      bool // the node needs an address in the network
}

var refPattern = regexp.MustCompile(`\b(ip|config)\s*(?:\[\s*['"]([^'"]+)['"]\s*\]|\.([A-Za-z_][A-Za-z0-9_-]*))`)

// referencedNetworks lists the networks a template names, in order, each once per kind.
func referencedNetworks(tmpl string) []networkRef {
	var refs []networkRef
	seen := map[string]bool{}
	for _, m := range refPattern.FindAllStringSubmatch(tmpl, -1) {
		name := m[2] + m[3]
		if seen[m[1]+"/"+name] {
			continue
		}
		seen[m[1]+"/"+name] = true
		refs = append(refs, networkRef{network: name, expr: m[0], ip: m[1] == "ip"})
	}
	return refs
}

// Networks returns the networks the unit's nodes take an address from: those its template
// names as ip[...], sorted.
func (u *Unit) Networks() []string {
	var names []string
	for _, r := range referencedNetworks(u.NetworkConfig) {
		if r.ip && !slices.Contains(names, r.network) {
			names = append(names, r.network)
		}
	}
	slices.Sort(names)
	return names
}

// Render renders the unit's template for one node: ip[<network>] is the node's address with
// the network's prefix length (192.168.0.10/24), config[<network>] the network (gateway,
// dnsServers, netmask, cidr). Undefined names are errors, so a typo does not render as nothing.
// The data controller renders a Metal3DataTemplate's osNetConfig through the same code
// (osnetconfig.Template), so phase 2 gives the same text for the same addresses.
func (f *File) Render(u *Unit, node *Node, addrs map[string]netip.Addr) (string, error) {
	ip := map[string]string{}
	for net, a := range addrs {
		ip[net] = netip.PrefixFrom(a, f.Networks[net].Netmask).String()
	}
	return f.render(u, node, ip)
}

// ConfigValues is what config[<network>] holds for each network of the file.
func (f *File) ConfigValues() map[string]osnetconfig.Network {
	cfg := map[string]osnetconfig.Network{}
	for name, n := range f.Networks {
		cfg[name] = osnetconfig.Network{
			Name: name, Netmask: n.Netmask, CIDR: n.Prefix().String(), Gateway: n.Gateway, DNSServers: n.DNSServers,
		}
	}
	return cfg
}

func (f *File) render(u *Unit, node *Node, ip map[string]string) (string, error) {
	tmpl, err := osnetconfig.ParseTemplate(u.Path, u.NetworkConfig)
	if err != nil {
		return "", fmt.Errorf("%s.networkConfig is %w", u.Path, err)
	}
	out, err := tmpl.Render(osnetconfig.Values{IP: ip, Config: f.ConfigValues(), Node: node.Key, Unit: u.Name})
	if err != nil {
		return "", fmt.Errorf("%s.networkConfig, rendering for %s: %w", u.Path, node.Name, err)
	}
	return out, nil
}
