package osnetconfig

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/nikolalohinski/gonja/v2"
	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/pkg/render/yamlout"
)

func init() {
	// gonja logs through logrus to stderr; its errors come back as values here.
	gonja.SetLoggerOutput(io.Discard)
}

// Network is what a template sees as config['<name>'].
type Network struct {
	Name    string
	Netmask int
	// CIDR is the network's prefix (192.168.0.0/24).
	CIDR       string
	Gateway    string
	DNSServers []string
}

// Values are the names a template may use: ip['<network>'] (an address with its prefix length,
// 192.168.0.10/24, what ip_netmask wants), config['<network>'], node and unit.
type Values struct {
	IP     map[string]string
	Config map[string]Network
	Node   string
	Unit   string
}

// Template is a parsed os-net-config Jinja2 template. Both `metalwire generate` (per node) and
// the data controller (per host) render through it, so the same text and the same values give
// the same bytes.
type Template struct {
	tmpl *exec.Template
}

// ParseTemplate parses Jinja2 text; name is used by the engine only.
func ParseTemplate(name, text string) (*Template, error) {
	c := config.New()
	c.StrictUndefined = true
	c.KeepTrailingNewline = true
	loader, err := loaders.NewMemoryLoader(map[string]string{"/" + name: text})
	if err != nil {
		return nil, err
	}
	tmpl, err := exec.NewTemplate("/"+name, c, loader, gonja.DefaultEnvironment)
	if err != nil {
		return nil, fmt.Errorf("not a valid Jinja2 template: %s", oneLine(err))
	}
	return &Template{tmpl: tmpl}, nil
}

// Render renders the template with v. Undefined names are errors (strict undefined), so a typo
// does not render as nothing.
func (t *Template) Render(v Values) (string, error) {
	ip := make(map[string]any, len(v.IP))
	for k, a := range v.IP {
		ip[k] = a
	}
	cfg := make(map[string]any, len(v.Config))
	for k, n := range v.Config {
		net := map[string]any{"netmask": n.Netmask, "name": n.Name, "cidr": n.CIDR}
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
		cfg[k] = net
	}
	ctx := exec.NewContext(map[string]any{"ip": ip, "config": cfg, "node": v.Node, "unit": v.Unit})
	out, err := t.tmpl.ExecuteToString(ctx)
	if err != nil {
		return "", fmt.Errorf("%s; the template may use ip[<network>], config[<network>].gateway/.dnsServers/.netmask/.cidr, node and unit", oneLine(err))
	}
	return out, nil
}

// Config turns a rendered template (a list of objects, or network_config: holding one) into
// the config file, `network_config:` holding the list, and checks it against os-net-config's
// schema. It returns the list too.
func Config(rendered string) ([]byte, []any, error) {
	list, err := interfaceList([]byte(rendered))
	if err != nil {
		return nil, nil, err
	}
	doc, err := ConfigFile(list)
	if err != nil {
		return nil, nil, err
	}
	return doc, list, nil
}

// ConfigFile writes the config file, `network_config:` holding list, after checking the list
// against os-net-config's schema. The list is checked as the file will read (yamlout writes
// every string os-net-config's YAML 1.1 reader would take for something else in quotes), so the
// file is not read back to be checked.
func ConfigFile(list []any) ([]byte, error) {
	tree, err := yamlout.Value(map[string]any{"network_config": list})
	if err != nil {
		return nil, err
	}
	if err := validateList(tree.(map[string]any)["network_config"], "network_config"); err != nil {
		return nil, err
	}
	return yamlout.Encode(tree)
}

// MappingFile writes the mapping file, `interface_mapping: {alias: MAC}`, after checking
// os-net-config's rules for it.
func MappingFile(mapping map[string]string) ([]byte, error) {
	if err := CheckMapping(mapping); err != nil {
		return nil, err
	}
	return yamlout.Marshal(map[string]any{"interface_mapping": mapping})
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

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
