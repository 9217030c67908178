package render

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/metalwire/metalwire/pkg/render/osnetconfig"
)

// Keys of the networkData Secret that carry the os-net-config documents, beside networkData
// (network_data.json as YAML). When the network data cannot be written for os-net-config (a
// bridge setting linux_bridge has no field for), the Secret holds OSNetConfigErrorKey instead,
// saying why, and networkData as always.
const (
	OSNetConfigKey        = "osNetConfig"
	OSNetConfigMappingKey = "osNetConfigMapping"
	OSNetConfigErrorKey   = "osNetConfigError"
)

// OSNetConfig is the network written for os-net-config: the config file
// (/etc/os-net-config/config.yaml) and the mapping file (/etc/os-net-config/mapping.yaml).
type OSNetConfig struct {
	// Config is `network_config:` with one object per top-level device: interface, linux_bond
	// (its members nested), linux_bridge and vlan.
	Config []byte
	// Mapping is `interface_mapping: {name: MAC}` for every Ethernet link whose name is not the
	// kernel's name of its NIC: os-net-config then finds the NIC by its MAC.
	Mapping []byte
	// Netplan is the same network as one netplan file, for an osNetConfig template whose
	// format is netplan; nil otherwise.
	Netplan []byte
}

// OSNetConfig writes the network for os-net-config. Ethernets are named by the link's name, else
// its id; a name that is not the kernel name of the link's NIC (nics, the host's inspected
// interfaces) is mapped to the NIC's MAC in the mapping file. Both documents are checked with
// os-net-config's own rules (its schema; no device mapped twice) before they are returned.
func (n *NetworkData) OSNetConfig(nics []NIC) (*OSNetConfig, error) {
	l3, err := n.layer3()
	if err != nil {
		return nil, err
	}
	mapping, err := n.osNetConfigMapping(nics)
	if err != nil {
		return nil, err
	}
	// A bond's or bridge's members are written inside it, not at the top.
	nested := map[string]bool{}
	for _, l := range n.Links {
		for _, m := range slices.Concat(l.BondLinks, l.BridgeLinks) {
			nested[m] = true
		}
	}
	w := osNetConfigWriter{n: n, l3: l3}
	var list []any
	for _, l := range n.Links {
		if nested[l.ID] {
			continue
		}
		obj, err := w.object(l, map[string]bool{})
		if err != nil {
			return nil, err
		}
		list = append(list, obj)
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("os-net-config: the network data has no links; os-net-config needs at least one device")
	}
	config, err := osnetconfig.ConfigFile(list)
	if err != nil {
		return nil, fmt.Errorf("rendering os-net-config: %w", err)
	}
	mapDoc, err := osnetconfig.MappingFile(mapping)
	if err != nil {
		return nil, fmt.Errorf("rendering os-net-config: %w", err)
	}
	return &OSNetConfig{Config: config, Mapping: mapDoc}, nil
}

// osNetConfigMapping maps each Ethernet link's name to its MAC, unless the name already is the
// kernel name of that NIC. os-net-config refuses an alias that is the name of an active NIC
// ("alias overlaps with active NIC"), so a link named after another NIC is an error here.
func (n *NetworkData) osNetConfigMapping(nics []NIC) (map[string]string, error) {
	kernelName := map[string]string{} // normalised MAC -> kernel name
	for _, nic := range nics {
		kernelName[osnetconfig.NormalizeMAC(nic.MAC)] = nic.Name
	}
	mapping := map[string]string{}
	for _, l := range n.Links {
		if l.Type == LinkBond || l.Type == LinkVLAN || l.Bridge {
			continue
		}
		name := deviceName(l)
		own := kernelName[osnetconfig.NormalizeMAC(l.MAC)]
		if own == name {
			continue
		}
		if i := slices.IndexFunc(nics, func(nic NIC) bool { return nic.Name == name }); i >= 0 {
			return nil, fmt.Errorf("os-net-config: link %q is named %q, the name of the host's NIC with MAC %s, but its MAC is %s; os-net-config refuses an alias that is an active NIC's name: name the link %q or something no NIC has (nic1, em0)", l.ID, name, nics[i].MAC, l.MAC, own)
		}
		mapping[name] = l.MAC
	}
	return mapping, nil
}

type osNetConfigWriter struct {
	n  *NetworkData
	l3 map[string]*layer3
}

// object writes one link and, for a bond or bridge, its members. seen guards against a member
// cycle, which the template's validation already refuses.
func (w osNetConfigWriter) object(l Link, seen map[string]bool) (map[string]any, error) {
	if seen[l.ID] {
		return nil, fmt.Errorf("os-net-config: link %q is its own member", l.ID)
	}
	seen[l.ID] = true
	obj := map[string]any{}
	if l.MTU != 0 {
		obj["mtu"] = l.MTU
	}
	switch {
	case l.Type == LinkBond:
		obj["type"], obj["name"] = "linux_bond", deviceName(l)
		members, err := w.members(l.BondLinks, seen)
		if err != nil {
			return nil, err
		}
		obj["members"] = members
		opts, err := bondingOptions(l)
		if err != nil {
			return nil, err
		}
		obj["bonding_options"] = opts
	case l.Bridge:
		if len(l.Params) > 0 {
			return nil, fmt.Errorf("os-net-config: link %q: bridge settings (%s) have no os-net-config linux_bridge equivalent; remove them or use another format", l.ID, strings.Join(slices.Sorted(maps.Keys(l.Params)), ", "))
		}
		obj["type"], obj["name"] = "linux_bridge", deviceName(l)
		members, err := w.members(l.BridgeLinks, seen)
		if err != nil {
			return nil, err
		}
		obj["members"] = members
	case l.Type == LinkVLAN:
		// os-net-config names a VLAN device vlan<id> itself: its schema has no name for one.
		obj["type"], obj["vlan_id"] = "vlan", l.VLANID
		obj["device"] = w.n.deviceNames([]string{l.VLANLink})[0]
	default:
		obj["type"], obj["name"] = "interface", deviceName(l)
	}
	if c, ok := w.l3[l.ID]; ok {
		c.osNetConfig(obj)
	} else if l.Type != LinkBond && !l.Bridge {
		// A device with no network of its own (a bond member, a VLAN's parent): no DHCP on it.
		obj["use_dhcp"] = false
	}
	return obj, nil
}

func (w osNetConfigWriter) members(ids []string, seen map[string]bool) ([]any, error) {
	out := make([]any, 0, len(ids))
	for _, id := range ids {
		m, ok := w.n.linkByID(id)
		if !ok {
			return nil, fmt.Errorf("os-net-config: member %q is not a link", id)
		}
		obj, err := w.object(m, seen)
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}

// bondingOptions writes a bond's mode and settings as os-net-config's bonding_options, the
// kernel's names: "mode=802.3ad xmit_hash_policy=layer3+4 miimon=100".
func bondingOptions(l Link) (string, error) {
	opts := []string{"mode=" + l.BondMode}
	if l.BondXmitHashPolicy != "" {
		opts = append(opts, "xmit_hash_policy="+l.BondXmitHashPolicy)
	}
	for _, key := range slices.Sorted(maps.Keys(l.Params)) {
		name := strings.TrimPrefix(key, "bond_")
		v := paramValue(l.Params[key])
		var s string
		switch t := v.(type) {
		case string:
			s = t
		case []any:
			parts := make([]string, len(t))
			for i, p := range t {
				parts[i] = fmt.Sprint(p)
			}
			s = strings.Join(parts, ",")
		default:
			s = fmt.Sprint(t)
		}
		if s == "" || strings.ContainsAny(s, " \t=") {
			return "", fmt.Errorf("os-net-config: link %q: bond setting %s=%q cannot be written in bonding_options (name=value separated by spaces)", l.ID, name, s)
		}
		opts = append(opts, name+"="+s)
	}
	return strings.Join(opts, " "), nil
}

// osNetConfig puts the link's addresses, DHCP, routes and DNS servers on its object. SLAAC has
// no os-net-config setting: the distribution's default applies.
func (c *layer3) osNetConfig(obj map[string]any) {
	obj["use_dhcp"] = c.dhcp4
	if c.dhcp6 {
		obj["use_dhcpv6"] = true
	}
	if len(c.addresses) > 0 {
		addrs := make([]any, len(c.addresses))
		for i, a := range c.addresses {
			addrs[i] = map[string]any{"ip_netmask": a}
		}
		obj["addresses"] = addrs
	}
	if len(c.routes) > 0 {
		routes := make([]any, len(c.routes))
		for i, r := range c.routes {
			if r.PrefixLen == 0 {
				routes[i] = map[string]any{"default": true, "next_hop": r.Gateway}
				continue
			}
			routes[i] = map[string]any{"ip_netmask": r.Network + "/" + strconv.Itoa(r.PrefixLen), "next_hop": r.Gateway}
		}
		obj["routes"] = routes
	}
	if len(c.dns) > 0 {
		obj["dns_servers"] = c.dns
	}
}
