package render

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/pkg/render/osnetconfig"
)

// OSNetConfigField is the path of a Metal3DataTemplate's os-net-config template, in messages.
const OSNetConfigField = "osNetConfig"

// OSNetConfigPools lists the pools a Metal3DataTemplate's osNetConfig takes addresses from, in
// order, skipping those already in known: a host claims one address per pool, which networkData
// and osNetConfig share.
func OSNetConfigPools(t *infrav1.OSNetConfigTemplate, known []PoolRef) []PoolRef {
	if t == nil {
		return known
	}
	out := slices.Clone(known)
	for _, n := range t.Networks {
		ref := NewPoolRef("", "", n.IPPool)
		if !slices.Contains(out, ref) {
			out = append(out, ref)
		}
	}
	return out
}

// OSNetConfigFromTemplate renders a Metal3DataTemplate's osNetConfig for one host, as `metalwire
// generate` renders the same template for a node (the same code: osnetconfig.Template):
// ip['<network>'] is the host's address from the network's pool with the pool's prefix length,
// config['<network>'] the pool's prefix, gateway and DNS servers. The mapping file is the
// macMappings entry all of whose MACs the host has, else the interfaces list resolved against
// the host's NICs. Both documents are checked with os-net-config's rules.
func OSNetConfigFromTemplate(t *infrav1.OSNetConfigTemplate, f *Facts) (*OSNetConfig, error) {
	values := osnetconfig.Values{IP: map[string]string{}, Config: map[string]osnetconfig.Network{}, Unit: t.Unit, Node: f.Host.Name}
	mapping, node, err := osNetConfigMapping(t, f)
	if err != nil {
		return nil, err
	}
	if node != "" {
		values.Node = node
	}
	for i, n := range t.Networks {
		field := fmt.Sprintf("%s.networks[%d]", OSNetConfigField, i)
		src := poolSource{name: n.IPPool, field: field}
		a, err := src.address(f)
		if err != nil {
			return nil, err
		}
		addr, err := netip.ParseAddr(a.Address)
		if err != nil {
			return nil, invalid(field, "pool %s gave %q, not an IP address", n.IPPool, a.Address)
		}
		prefix := netip.PrefixFrom(addr, a.Prefix)
		if !prefix.IsValid() {
			return nil, invalid(field, "pool %s gave prefix length %d for %s; set the IPPool's prefix", n.IPPool, a.Prefix, a.Address)
		}
		values.IP[n.Name] = prefix.String()
		values.Config[n.Name] = osnetconfig.Network{
			Name: n.Name, Netmask: a.Prefix, CIDR: prefix.Masked().String(), Gateway: a.Gateway, DNSServers: a.DNSServers,
		}
	}
	tmpl, err := osnetconfig.ParseTemplate(OSNetConfigField, t.Template)
	if err != nil {
		return nil, invalid(OSNetConfigField+".template", "is %v", err)
	}
	text, err := tmpl.Render(values)
	if err != nil {
		return nil, invalid(OSNetConfigField+".template", "rendering for host %s: %v", f.Host.Name, err)
	}
	config, list, err := osnetconfig.Config(text)
	if err != nil {
		return nil, invalid(OSNetConfigField+".template", "rendered for host %s: %v; fix the template", f.Host.Name, err)
	}
	mapDoc, err := osnetconfig.MappingFile(mapping)
	if err != nil {
		return nil, invalid(OSNetConfigField, "the mapping for host %s: %v", f.Host.Name, err)
	}
	out := &OSNetConfig{Config: config, Mapping: mapDoc}
	switch t.Format {
	case "", infrav1.OSNetConfigFormatOSNetConfig:
	case infrav1.OSNetConfigFormatNetplan:
		// The converter `metalwire generate --format netplan` uses, so that both phases give a
		// host the same file.
		if out.Netplan, err = osnetconfig.Netplan(list, mapping); err != nil {
			return nil, invalid(OSNetConfigField+".format", "netplan: the configuration rendered for host %s: %v", f.Host.Name, err)
		}
	default:
		return nil, invalid(OSNetConfigField+".format", "%q is not a format; use %s or %s", t.Format, infrav1.OSNetConfigFormatOSNetConfig, infrav1.OSNetConfigFormatNetplan)
	}
	return out, nil
}

// osNetConfigMapping chooses the host's interface mapping, and its name for {{ node }} when a
// macMappings entry matched.
func osNetConfigMapping(t *infrav1.OSNetConfigTemplate, f *Facts) (map[string]string, string, error) {
	if len(t.MACMappings) == 0 && len(t.Interfaces) == 0 {
		return map[string]string{}, "", nil
	}
	if len(f.NICs) == 0 {
		return nil, "", &Error{
			Field: OSNetConfigField, Reason: ReasonHostNotInspected,
			Detail: fmt.Sprintf("host %s has no inspected NICs yet, so its interface mapping cannot be chosen; wait for inspection", f.Host.Name),
		}
	}
	has := map[string]string{} // normalised MAC -> kernel name
	for _, nic := range f.NICs {
		has[osnetconfig.NormalizeMAC(nic.MAC)] = nic.Name
	}
	for _, m := range t.MACMappings {
		all := len(m.Interfaces) > 0
		for _, mac := range m.Interfaces {
			if _, ok := has[osnetconfig.NormalizeMAC(string(mac))]; !ok {
				all = false
				break
			}
		}
		if all {
			out := make(map[string]string, len(m.Interfaces))
			for alias, mac := range m.Interfaces {
				out[alias] = string(mac)
			}
			return out, m.Name, nil
		}
	}
	if len(t.Interfaces) == 0 {
		names := make([]string, len(t.MACMappings))
		for i, m := range t.MACMappings {
			names[i] = m.Name
		}
		return nil, "", invalid(OSNetConfigField+".macMappings", "host %s (NICs %s) has the MACs of none of %s; add an entry with the host's MACs, or map aliases to NIC names in osNetConfig.interfaces",
			f.Host.Name, nicList(f.NICs), strings.Join(names, ", "))
	}
	out := make(map[string]string, len(t.Interfaces))
	for i, in := range t.Interfaces {
		j := slices.IndexFunc(f.NICs, func(n NIC) bool { return n.Name == in.HostInterface })
		if j < 0 {
			return nil, "", invalid(fmt.Sprintf("%s.interfaces[%d].hostInterface", OSNetConfigField, i), "host %s has no NIC %q; its NICs are %s",
				f.Host.Name, in.HostInterface, nicList(f.NICs))
		}
		out[in.Alias] = f.NICs[j].MAC
	}
	return out, "", nil
}

func nicList(nics []NIC) string {
	parts := make([]string, len(nics))
	for i, n := range nics {
		parts[i] = n.Name + "=" + n.MAC
	}
	return strings.Join(parts, ", ")
}

// WithOSNetConfigAliases returns facts for rendering metaData and networkData beside an
// osNetConfig template: each alias of the host's interface mapping (em1) also names the NIC it
// maps to, so networkData's macAddress.fromHostInterface: em1 finds the same NIC os-net-config
// does, whatever its kernel name. A NIC's own name wins over an alias. Without osNetConfig,
// facts are returned as they are.
func WithOSNetConfigAliases(t *infrav1.OSNetConfigTemplate, f *Facts) (*Facts, error) {
	if t == nil {
		return f, nil
	}
	mapping, _, err := osNetConfigMapping(t, f)
	if err != nil {
		return nil, err
	}
	out := *f
	out.NICs = slices.Clone(f.NICs)
	for _, alias := range slices.Sorted(maps.Keys(mapping)) {
		if !slices.ContainsFunc(f.NICs, func(n NIC) bool { return n.Name == alias }) {
			out.NICs = append(out.NICs, NIC{Name: alias, MAC: mapping[alias]})
		}
	}
	return &out, nil
}
