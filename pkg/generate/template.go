package generate

import (
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/nikolalohinski/gonja/v2"
	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
)

func init() {
	// gonja logs through logrus to stderr; its errors come back as values here.
	gonja.SetLoggerOutput(io.Discard)
}

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
// dnsServers, netmask). Undefined names are errors, so a typo does not render as nothing.
func (f *File) Render(u *Unit, node *Node, addrs map[string]netip.Addr) (string, error) {
	ip := map[string]any{}
	for net, a := range addrs {
		ip[net] = netip.PrefixFrom(a, f.Networks[net].Netmask).String()
	}
	return f.render(u, node, ip)
}

func (f *File) render(u *Unit, node *Node, ip map[string]any) (string, error) {
	cfg := map[string]any{}
	for name, n := range f.Networks {
		net := map[string]any{"netmask": n.Netmask, "name": name, "cidr": n.Prefix().String()}
		if n.Gateway != "" {
			net["gateway"] = n.Gateway
		}
		if len(n.DNSServers) > 0 {
			dns := make([]any, len(n.DNSServers))
			for i, s := range n.DNSServers {
				dns[i] = s
			}
			net["dnsServers"] = dns
		}
		cfg[name] = net
	}
	c := config.New()
	c.StrictUndefined = true
	c.KeepTrailingNewline = true
	loader, err := loaders.NewMemoryLoader(map[string]string{"/" + u.Path: u.NetworkConfig})
	if err != nil {
		return "", err
	}
	tmpl, err := exec.NewTemplate("/"+u.Path, c, loader, gonja.DefaultEnvironment)
	if err != nil {
		return "", fmt.Errorf("%s.networkConfig is not a valid Jinja2 template: %s", u.Path, oneLine(err))
	}
	ctx := exec.NewContext(map[string]any{"ip": ip, "config": cfg, "node": node.Key, "unit": u.Name})
	out, err := tmpl.ExecuteToString(ctx)
	if err != nil {
		return "", fmt.Errorf("%s.networkConfig, rendering for %s: %s; the template may use ip[<network>], config[<network>].gateway/.dnsServers/.netmask, node and unit",
			u.Path, node.Name, oneLine(err))
	}
	return out, nil
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
