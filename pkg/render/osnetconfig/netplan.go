package osnetconfig

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/metalwire/metalwire/pkg/render/yamlout"
)

// Netplan converts a rendered os-net-config list to a netplan (v2) file, for hosts that have
// netplan but not os-net-config (`metalwire generate --format netplan`, and a Metal3DataTemplate
// whose osNetConfig.format is netplan): interfaces become ethernets (matched by the MAC the mapping
// gives their alias, and renamed to it), linux_bond and ovs_bond bonds, linux_bridge and
// ovs_bridge bridges (Open vSwitch ones marked openvswitch), vlan vlans; addresses, routes, DNS,
// DHCP and MTU carry over. Anything netplan cannot say is an error naming it.
func Netplan(interfaces []any, mapping map[string]string) ([]byte, error) {
	c := &netplanConverter{mapping: mapping, sections: map[string]map[string]map[string]any{}}
	for i, item := range interfaces {
		if _, err := c.add(item, fmt.Sprintf("network_config[%d]", i), ""); err != nil {
			return nil, err
		}
	}
	network := map[string]any{"version": 2, "renderer": "networkd"}
	for section, devs := range c.sections {
		network[section] = devs
	}
	return yamlout.Marshal(map[string]any{"network": network})
}

type netplanConverter struct {
	mapping map[string]string
	// sections: ethernets, bonds, bridges, vlans -> device name -> its netplan settings.
	sections map[string]map[string]map[string]any
}

func (c *netplanConverter) device(section, name string) map[string]any {
	if c.sections[section] == nil {
		c.sections[section] = map[string]map[string]any{}
	}
	if c.sections[section][name] == nil {
		c.sections[section][name] = map[string]any{}
	}
	return c.sections[section][name]
}

// commonKeys are the os-net-config keys every device type shares, handled by common.
var commonKeys = []string{"type", "name", "addresses", "routes", "dns_servers", "domain", "use_dhcp", "use_dhcpv6", "mtu", "defroute", "primary", "nm_controlled", "onboot"}

// add converts one os-net-config object (at place), member of parent ("" at the top), and
// returns the netplan name of the device.
func (c *netplanConverter) add(item any, place, parent string) (string, error) {
	obj, ok := item.(map[string]any)
	if !ok {
		return "", fmt.Errorf("%s is not an object", place)
	}
	typ, _ := obj["type"].(string)
	name, _ := obj["name"].(string)
	var dev map[string]any
	var extra []string
	switch typ {
	case "interface":
		dev = c.device("ethernets", name)
		if mac, ok := c.mapping[name]; ok {
			dev["match"] = map[string]any{"macaddress": mac}
			dev["set-name"] = name
		}
	case "vlan":
		extra = []string{"vlan_id", "device"}
		id, ok := Int(obj["vlan_id"])
		if !ok {
			return "", fmt.Errorf("%s.vlan_id: want a number", place)
		}
		link, _ := obj["device"].(string)
		if link == "" {
			link = parent
		}
		if link == "" {
			return "", fmt.Errorf("%s: a vlan needs a device (or to be a member of a bridge)", place)
		}
		if name == "" {
			name = "vlan" + strconv.Itoa(id)
		}
		dev = c.device("vlans", name)
		dev["id"], dev["link"] = id, link
	case "linux_bond", "ovs_bond":
		extra = []string{"members", "bonding_options", "ovs_options"}
		dev = c.device("bonds", name)
		params, err := BondParameters(obj, typ)
		if err != nil {
			return "", fmt.Errorf("%s: %w", place, err)
		}
		ovs := map[string]any{}
		if lacp, ok := params["lacp"]; ok {
			ovs["lacp"] = lacp
			delete(params, "lacp")
		}
		if len(params) > 0 {
			dev["parameters"] = params
		}
		if typ == "ovs_bond" {
			dev["openvswitch"] = ovs
		}
	case "linux_bridge", "ovs_bridge":
		extra = []string{"members", "ovs_options"}
		dev = c.device("bridges", name)
		if typ == "ovs_bridge" {
			dev["openvswitch"] = map[string]any{}
		}
	default:
		return "", fmt.Errorf("%s: type %q has no netplan equivalent; use interface, vlan, linux_bond, linux_bridge, ovs_bond or ovs_bridge, or the os-net-config format", place, typ)
	}
	if name == "" {
		return "", fmt.Errorf("%s: a %s needs a name", place, typ)
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if !slices.Contains(commonKeys, k) && !slices.Contains(extra, k) {
			return "", fmt.Errorf("%s.%s has no netplan equivalent; remove it or use the os-net-config format", place, k)
		}
	}
	if err := common(dev, obj, place); err != nil {
		return "", err
	}
	if members, ok := obj["members"].([]any); ok {
		var names []string
		for i, m := range members {
			n, err := c.add(m, fmt.Sprintf("%s.members[%d]", place, i), name)
			if err != nil {
				return "", err
			}
			// A VLAN on a bridge is not one of its ports: it sits on top of it.
			if mt, _ := m.(map[string]any)["type"].(string); mt != "vlan" {
				names = append(names, n)
			}
		}
		if len(names) > 0 {
			dev["interfaces"] = names
		}
	}
	return name, nil
}

// common carries the settings every netplan device has.
func common(dev, obj map[string]any, place string) error {
	if list, ok := obj["addresses"].([]any); ok {
		var addrs []any
		for i, a := range list {
			m, _ := a.(map[string]any)
			cidr, _ := m["ip_netmask"].(string)
			if cidr == "" {
				return fmt.Errorf("%s.addresses[%d]: want {ip_netmask: <CIDR>}", place, i)
			}
			addrs = append(addrs, cidr)
		}
		dev["addresses"] = addrs
	}
	if list, ok := obj["routes"].([]any); ok {
		var routes []any
		for i, r := range list {
			m, _ := r.(map[string]any)
			route := map[string]any{}
			for _, k := range slices.Sorted(maps.Keys(m)) {
				switch k {
				case "default":
					if b, _ := m[k].(bool); b {
						route["to"] = "default"
					}
				case "ip_netmask", "destination":
					route["to"] = m[k]
				case "next_hop", "nexthop":
					route["via"] = m[k]
				case "route_options":
					opts, _ := m[k].(string)
					if f := strings.Fields(opts); len(f) == 2 && f[0] == "metric" {
						if n, err := strconv.Atoi(f[1]); err == nil {
							route["metric"] = n
							continue
						}
					}
					return fmt.Errorf("%s.routes[%d].route_options %q has no netplan equivalent (only \"metric N\")", place, i, opts)
				default:
					return fmt.Errorf("%s.routes[%d].%s has no netplan equivalent", place, i, k)
				}
			}
			if route["to"] == nil {
				return fmt.Errorf("%s.routes[%d]: a route needs default: true or ip_netmask", place, i)
			}
			routes = append(routes, route)
		}
		dev["routes"] = routes
	}
	ns := map[string]any{}
	if list, ok := obj["dns_servers"].([]any); ok && len(list) > 0 {
		ns["addresses"] = list
	}
	switch d := obj["domain"].(type) {
	case string:
		ns["search"] = []any{d}
	case []any:
		ns["search"] = d
	}
	if len(ns) > 0 {
		dev["nameservers"] = ns
	}
	if b, ok := obj["use_dhcp"].(bool); ok {
		dev["dhcp4"] = b
	}
	if b, ok := obj["use_dhcpv6"].(bool); ok {
		dev["dhcp6"] = b
	}
	if mtu, ok := Int(obj["mtu"]); ok {
		dev["mtu"] = mtu
	}
	return nil
}

// BondParameters reads linux_bond's bonding_options ("mode=802.3ad miimon=100") or ovs_bond's
// ovs_options ("bond_mode=balance-slb lacp=active").
func BondParameters(obj map[string]any, typ string) (map[string]any, error) {
	key, names := "bonding_options", map[string]string{
		"mode": "mode", "miimon": "mii-monitor-interval", "lacp_rate": "lacp-rate",
		"xmit_hash_policy": "transmit-hash-policy", "primary": "primary", "updelay": "up-delay", "downdelay": "down-delay",
	}
	if typ == "ovs_bond" {
		key, names = "ovs_options", map[string]string{"bond_mode": "mode", "lacp": "lacp"}
	}
	opts, _ := obj[key].(string)
	params := map[string]any{}
	for _, kv := range strings.Fields(opts) {
		k, v, _ := strings.Cut(kv, "=")
		nk, ok := names[k]
		if !ok {
			return nil, fmt.Errorf("%s: %q has no netplan equivalent", key, kv)
		}
		if n, err := strconv.Atoi(v); err == nil {
			params[nk] = n
		} else {
			params[nk] = v
		}
	}
	return params, nil
}

// Int reads a number os-net-config accepts as an integer (a YAML int, or a string of one).
func Int(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		return int(n), n == float64(int(n))
	case string:
		i, err := strconv.Atoi(n)
		return i, err == nil
	}
	return 0, false
}
