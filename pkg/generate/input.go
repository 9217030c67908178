package generate

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// File is the user's configuration: the networks and the logical units (the controllers and
// each node pool).
type File struct {
	// Networks by name, from infra.networks.
	Networks map[string]*Network
	// Units in the order they are generated: controllers first, then the node pools by name.
	Units []*Unit
}

// Network is one entry of infra.networks.
type Network struct {
	Name         string
	Netmask      int
	AddressRange *AddressRange
	Addresses    []netip.Addr
	Gateway      string
	DNSServers   []string
}

// AddressRange is a network's addressRange: every address from Start to End, both included.
type AddressRange struct {
	Start, End netip.Addr
}

// Unit is a logical unit: the controllers or one node pool. Every node of a unit has the same
// network configuration, rendered from NetworkConfig with the node's own addresses.
type Unit struct {
	// Name is "controllers" or the node pool's name.
	Name string
	// Path is where the unit is in the file ("controllers", "nodepools.nodepool1"), for errors.
	Path string
	// ControlPlane is true for the controllers.
	ControlPlane bool
	Replicas     int
	HostSelector map[string]string
	// NetworkConfig is the os-net-config template, Jinja2 text.
	NetworkConfig string
	// Nodes in order, each with its interface mapping.
	Nodes []*Node
}

// Node is one node of a unit.
type Node struct {
	// Name is the unit's name and the macMapping key joined by "-" (controllers-node-0): the
	// name of the node's objects, of its entries in the address state, and of --delete.
	Name string
	// Key is the node's key in macMapping (node-0).
	Key string
	// Mapping maps os-net-config interface aliases (em0) to MAC addresses.
	Mapping map[string]string
}

// rawFile is the file as YAML after the templates are lifted out of it.
type rawFile struct {
	Infra struct {
		Networks map[string]rawNetwork `yaml:"networks"`
	} `yaml:"infra"`
	Controllers *rawUnit            `yaml:"controllers"`
	Nodepools   map[string]*rawUnit `yaml:"nodepools"`
}

type rawNetwork struct {
	Netmask      *int `yaml:"netmask"`
	AddressRange *struct {
		Start string `yaml:"start"`
		End   string `yaml:"end"`
	} `yaml:"addressRange"`
	Addresses  []string `yaml:"addresses"`
	Gateway    string   `yaml:"gateway"`
	DNSServers []string `yaml:"dnsServers"`
}

type rawUnit struct {
	Replicas      *int                         `yaml:"replicas"`
	HostSelector  map[string]string            `yaml:"hostSelector"`
	NetworkConfig string                       `yaml:"networkConfig"`
	MACMapping    yaml.Node                    `yaml:"macMapping"`
	mapping       map[string]map[string]string `yaml:"-"`
}

// templateToken stands in the YAML for a template lifted out of it.
const templateToken = "\x00metalwire-template-" //nolint:gosec // a placeholder, not a credential

var (
	// networkConfigKey is a networkConfig key whose template follows on the next lines.
	networkConfigKey = regexp.MustCompile(`^(\s*)networkConfig:\s*(#.*)?$`)
	// oneLineSelector is the seed's `hostSelector: metal3.io/controller: true`: one label on the
	// key's own line, which YAML does not allow.
	oneLineSelector = regexp.MustCompile(`^(\s*)hostSelector:\s+([^\s{\[#'"][^:\s]*):\s+(\S.*?)\s*$`)
)

// Parse reads the user's file. The os-net-config templates under networkConfig are Jinja2, not
// YAML until rendered (`dns_servers: {{ config['net0'].dnsServers }}`), so they are lifted out
// as text, by indentation, before the rest is parsed as YAML; a template may also be a YAML
// string (networkConfig: |). The seed's one-line `hostSelector: key: value` is read as the map
// {key: value}.
func Parse(data []byte) (*File, error) {
	lines := strings.Split(string(data), "\n")
	var templates []string
	for i := 0; i < len(lines); i++ {
		if m := oneLineSelector.FindStringSubmatch(lines[i]); m != nil {
			lines[i] = fmt.Sprintf("%shostSelector: {%q: %q}", m[1], m[2], unquote(m[3]))
			continue
		}
		m := networkConfigKey.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent := len(m[1])
		end := i + 1
		for end < len(lines) {
			l := lines[end]
			trimmed := strings.TrimLeft(l, " ")
			ind := len(l) - len(trimmed)
			if trimmed != "" && ind < indent || trimmed != "" && ind == indent && !strings.HasPrefix(trimmed, "- ") && trimmed != "-" {
				break
			}
			end++
		}
		for end > i+1 && strings.TrimSpace(lines[end-1]) == "" {
			end--
		}
		templates = append(templates, dedent(lines[i+1:end]))
		lines[i] = fmt.Sprintf("%snetworkConfig: %q", m[1], templateToken+strconv.Itoa(len(templates)-1))
		for j := i + 1; j < end; j++ {
			lines[j] = "" // keep line numbers of what follows
		}
		i = end - 1
	}

	var raw rawFile
	dec := yaml.NewDecoder(bytes.NewReader([]byte(strings.Join(lines, "\n"))))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("reading the file: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	f := &File{Networks: map[string]*Network{}}
	for name, rn := range raw.Infra.Networks {
		n, err := parseNetwork(name, rn)
		if err != nil {
			return nil, err
		}
		f.Networks[name] = n
	}
	if len(f.Networks) == 0 {
		return nil, fmt.Errorf("infra.networks is empty; define the networks the templates take addresses from")
	}
	if raw.Controllers != nil {
		u, err := parseUnit("controllers", "controllers", raw.Controllers, templates)
		if err != nil {
			return nil, err
		}
		u.ControlPlane = true
		f.Units = append(f.Units, u)
	}
	pools := make([]string, 0, len(raw.Nodepools))
	for name := range raw.Nodepools {
		pools = append(pools, name)
	}
	slices.Sort(pools)
	for _, name := range pools {
		u, err := parseUnit(name, "nodepools."+name, raw.Nodepools[name], templates)
		if err != nil {
			return nil, err
		}
		f.Units = append(f.Units, u)
	}
	if len(f.Units) == 0 {
		return nil, fmt.Errorf("the file has neither controllers nor nodepools; add at least one logical unit")
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	return f, nil
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}

// dedent removes the indentation the template's lines share.
func dedent(lines []string) string {
	common := -1
	for _, l := range lines {
		t := strings.TrimLeft(l, " ")
		if t == "" {
			continue
		}
		if ind := len(l) - len(t); common < 0 || ind < common {
			common = ind
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) >= common && common > 0 {
			out[i] = l[common:]
		} else {
			out[i] = strings.TrimLeft(l, " ")
		}
	}
	return strings.Join(out, "\n") + "\n"
}

func parseNetwork(name string, rn rawNetwork) (*Network, error) {
	at := "infra.networks." + name
	n := &Network{Name: name, Gateway: rn.Gateway, DNSServers: rn.DNSServers}
	if rn.Netmask == nil {
		return nil, fmt.Errorf("%s has no netmask; add the prefix length, e.g. netmask: 24", at)
	}
	n.Netmask = *rn.Netmask
	switch {
	case rn.AddressRange == nil && len(rn.Addresses) == 0:
		return nil, fmt.Errorf("%s has neither addressRange nor addresses; add addressRange: {start: ..., end: ...} or an addresses list", at)
	case rn.AddressRange != nil && len(rn.Addresses) > 0:
		return nil, fmt.Errorf("%s has both addressRange and addresses; keep one", at)
	case rn.AddressRange != nil:
		start, err := netip.ParseAddr(rn.AddressRange.Start)
		if err != nil {
			return nil, fmt.Errorf("%s.addressRange.start: %q is not an IP address", at, rn.AddressRange.Start)
		}
		end, err := netip.ParseAddr(rn.AddressRange.End)
		if err != nil {
			return nil, fmt.Errorf("%s.addressRange.end: %q is not an IP address", at, rn.AddressRange.End)
		}
		if start.Is4() != end.Is4() || end.Less(start) {
			return nil, fmt.Errorf("%s.addressRange: end %s comes before start %s; swap them", at, end, start)
		}
		n.AddressRange = &AddressRange{Start: start, End: end}
	default:
		for i, s := range rn.Addresses {
			a, err := netip.ParseAddr(s)
			if err != nil {
				return nil, fmt.Errorf("%s.addresses[%d]: %q is not an IP address", at, i, s)
			}
			if slices.Contains(n.Addresses, a) {
				return nil, fmt.Errorf("%s.addresses[%d]: %s is listed twice; remove one", at, i, a)
			}
			n.Addresses = append(n.Addresses, a)
		}
	}
	bits := 32
	if n.first().Is6() {
		bits = 128
	}
	if n.Netmask < 1 || n.Netmask > bits {
		return nil, fmt.Errorf("%s.netmask: %d is not a prefix length; give 1 to %d", at, n.Netmask, bits)
	}
	if n.Gateway != "" {
		if _, err := netip.ParseAddr(n.Gateway); err != nil {
			return nil, fmt.Errorf("%s.gateway: %q is not an IP address", at, n.Gateway)
		}
	}
	for i, s := range n.DNSServers {
		if _, err := netip.ParseAddr(s); err != nil {
			return nil, fmt.Errorf("%s.dnsServers[%d]: %q is not an IP address", at, i, s)
		}
	}
	return n, nil
}

// first returns the network's first address, to tell IPv4 from IPv6.
func (n *Network) first() netip.Addr {
	if n.AddressRange != nil {
		return n.AddressRange.Start
	}
	return n.Addresses[0]
}

// Prefix is the network's CIDR (192.168.0.0/24).
func (n *Network) Prefix() netip.Prefix {
	p, _ := n.first().Prefix(n.Netmask)
	return p
}

func parseUnit(name, path string, ru *rawUnit, templates []string) (*Unit, error) {
	u := &Unit{Name: name, Path: path, HostSelector: ru.HostSelector}
	if ru.Replicas == nil {
		return nil, fmt.Errorf("%s has no replicas; add replicas: <number of nodes>", path)
	}
	u.Replicas = *ru.Replicas
	switch {
	case strings.HasPrefix(ru.NetworkConfig, templateToken):
		i, _ := strconv.Atoi(strings.TrimPrefix(ru.NetworkConfig, templateToken))
		u.NetworkConfig = templates[i]
	case strings.TrimSpace(ru.NetworkConfig) == "":
		return nil, fmt.Errorf("%s has no networkConfig; add the os-net-config template of its nodes", path)
	default:
		u.NetworkConfig = ru.NetworkConfig
	}
	if err := ru.MACMapping.Decode(&ru.mapping); err != nil {
		return nil, fmt.Errorf("%s.macMapping: want a map of node to {interface: MAC}: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	keys := make([]string, 0, len(ru.mapping))
	for k := range ru.mapping {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareNatural)
	if u.Replicas < 0 {
		return nil, fmt.Errorf("%s.replicas: %d is negative", path, u.Replicas)
	}
	if len(keys) < u.Replicas {
		return nil, fmt.Errorf("%s: replicas is %d but macMapping maps %d node(s) (%s); add the interface MACs of the missing %d node(s) under %s.macMapping, or lower replicas",
			path, u.Replicas, len(keys), strings.Join(keys, ", "), u.Replicas-len(keys), path)
	}
	if len(keys) > u.Replicas {
		return nil, fmt.Errorf("%s: replicas is %d but macMapping maps %d nodes (%s); raise replicas to %d or remove the nodes you do not want",
			path, u.Replicas, len(keys), strings.Join(keys, ", "), len(keys))
	}
	for _, k := range keys {
		mapping := map[string]string{}
		for alias, mac := range ru.mapping[k] {
			hw, err := net.ParseMAC(mac)
			if err != nil {
				return nil, fmt.Errorf("%s.macMapping.%s.%s: %q is not a MAC address", path, k, alias, mac)
			}
			mapping[alias] = hw.String()
		}
		if len(mapping) == 0 {
			return nil, fmt.Errorf("%s.macMapping.%s maps no interface; add {em0: <MAC>, ...}", path, k)
		}
		u.Nodes = append(u.Nodes, &Node{Name: name + "-" + k, Key: k, Mapping: mapping})
	}
	return u, nil
}

// compareNatural orders node-2 before node-10.
func compareNatural(a, b string) int {
	ta, na := splitNumber(a)
	tb, nb := splitNumber(b)
	if ta != tb || na < 0 || nb < 0 {
		return strings.Compare(a, b)
	}
	return na - nb
}

func splitNumber(s string) (string, int) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	n, err := strconv.Atoi(s[i:])
	if err != nil {
		return s, -1
	}
	return s[:i], n
}

// check looks at the whole file: node names unique, no MAC twice, every network a template
// names defined.
func (f *File) check() error {
	nodes := map[string]string{}
	macs := map[string]string{}
	for _, u := range f.Units {
		for _, n := range u.Nodes {
			if other, ok := nodes[n.Name]; ok {
				return fmt.Errorf("%s.macMapping.%s and %s both make a node named %s; rename one", u.Path, n.Key, other, n.Name)
			}
			nodes[n.Name] = u.Path + ".macMapping." + n.Key
			aliases := make([]string, 0, len(n.Mapping))
			for a := range n.Mapping {
				aliases = append(aliases, a)
			}
			slices.Sort(aliases)
			for _, a := range aliases {
				place := u.Path + ".macMapping." + n.Key + "." + a
				if other, ok := macs[n.Mapping[a]]; ok {
					return fmt.Errorf("MAC %s is given twice, at %s and %s; each interface has its own MAC", n.Mapping[a], other, place)
				}
				macs[n.Mapping[a]] = place
			}
		}
		for _, ref := range referencedNetworks(u.NetworkConfig) {
			if _, ok := f.Networks[ref.network]; !ok {
				return fmt.Errorf("%s.networkConfig uses %s, but infra.networks has no network %q (it has %s); define it or fix the name",
					u.Path, ref.expr, ref.network, strings.Join(f.NetworkNames(), ", "))
			}
		}
	}
	return nil
}

// NetworkNames returns the names of the networks, sorted.
func (f *File) NetworkNames() []string {
	names := make([]string, 0, len(f.Networks))
	for n := range f.Networks {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Node returns the node with that name and its unit.
func (f *File) Node(name string) (*Unit, *Node) {
	for _, u := range f.Units {
		for _, n := range u.Nodes {
			if n.Name == name {
				return u, n
			}
		}
	}
	return nil, nil
}
