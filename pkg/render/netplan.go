package render

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/metalwire/metalwire/pkg/render/yamlout"
)

// Netplan writes cloud-init network config version 2 (the netplan format) for hosts that do not
// read network_data.json. Ethernets are matched by MAC and keep their kernel name unless the
// template gives a name; bonds, bridges and VLANs are named by their name, else their id.
func (n *NetworkData) Netplan() ([]byte, error) {
	l3, err := n.layer3()
	if err != nil {
		return nil, err
	}
	sections := map[string]map[string]any{}
	add := func(section, key string, dev map[string]any) {
		if sections[section] == nil {
			sections[section] = map[string]any{}
		}
		sections[section][key] = dev
	}
	for _, l := range n.Links {
		dev := map[string]any{"mtu": l.MTU}
		key := deviceName(l)
		switch {
		case l.Type == LinkBond:
			dev["macaddress"] = l.MAC
			dev["interfaces"] = n.deviceNames(l.BondLinks)
			params := map[string]any{"mode": l.BondMode}
			if l.BondXmitHashPolicy != "" {
				params["transmit-hash-policy"] = l.BondXmitHashPolicy
			}
			if err := netplanParams(l, "bond_", netplanBondParams, params); err != nil {
				return nil, err
			}
			dev["parameters"] = params
			add("bonds", key, dev)
		case l.Bridge:
			dev["macaddress"] = l.MAC
			dev["interfaces"] = n.deviceNames(l.BridgeLinks)
			params := map[string]any{}
			if err := netplanParams(l, "bridge_", netplanBridgeParams, params); err != nil {
				return nil, err
			}
			if v, ok := params["accept-ra"]; ok {
				delete(params, "accept-ra")
				dev["accept-ra"] = v
			}
			if len(params) > 0 {
				dev["parameters"] = params
			}
			add("bridges", key, dev)
		case l.Type == LinkVLAN:
			dev["macaddress"] = l.MAC
			dev["id"] = l.VLANID
			dev["link"] = n.deviceNames([]string{l.VLANLink})[0]
			add("vlans", key, dev)
		default:
			dev["match"] = map[string]any{"macaddress": l.MAC}
			if l.Name != "" {
				dev["set-name"] = l.Name
			}
			add("ethernets", key, dev)
		}
		if cfg, ok := l3[l.ID]; ok {
			cfg.netplan(dev)
		}
	}
	network := map[string]any{"version": 2}
	for k, v := range sections {
		network[k] = v
	}
	return yamlout.Marshal(map[string]any{"network": network})
}

// deviceName is the interface name a link gets on the host: its name, else its id.
func deviceName(l Link) string {
	if l.Name != "" {
		return l.Name
	}
	return l.ID
}

// deviceNames maps link ids to the names netplan and nmstate refer to them by.
func (n *NetworkData) deviceNames(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id
		if l, ok := n.linkByID(id); ok {
			out[i] = deviceName(l)
		}
	}
	return out
}

// layer3 is what the networks put on one link.
type layer3 struct {
	addresses    []string // address/prefix
	dhcp4, dhcp6 bool
	acceptRA     *bool
	routes       []Route
	dns          []string
}

// layer3 groups networks by link; DNS servers (route services, then the document's) go to every
// link that has a network, since network_data.json's services are host-wide.
func (n *NetworkData) layer3() (map[string]*layer3, error) {
	out := map[string]*layer3{}
	yes, no := true, false
	for _, nw := range n.Networks {
		if _, ok := n.linkByID(nw.Link); !ok {
			return nil, fmt.Errorf("network %q is on link %q, which is not in links", nw.ID, nw.Link)
		}
		c := out[nw.Link]
		if c == nil {
			c = &layer3{}
			out[nw.Link] = c
		}
		switch nw.Type {
		case NetworkIPv4:
			c.addresses = append(c.addresses, nw.IPAddress+"/"+strconv.Itoa(nw.PrefixLen))
		case NetworkIPv6:
			c.addresses = append(c.addresses, nw.IPAddress+"/"+strconv.Itoa(nw.PrefixLen))
			if c.acceptRA == nil {
				c.acceptRA = &no // a static IPv6 address: do not let router adverts add another
			}
		case NetworkIPv4DHCP:
			c.dhcp4 = true
		case NetworkIPv6DHCP:
			c.dhcp6, c.acceptRA = true, &yes
		case NetworkIPv6SLAAC:
			c.acceptRA = &yes
		}
		c.routes = append(c.routes, nw.Routes...)
		for _, r := range nw.Routes {
			for _, s := range r.Services {
				c.dns = appendNew(c.dns, s.Address)
			}
		}
	}
	for _, c := range out {
		for _, s := range n.Services {
			c.dns = appendNew(c.dns, s.Address)
		}
	}
	return out, nil
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func (c *layer3) netplan(dev map[string]any) {
	if len(c.addresses) > 0 {
		dev["addresses"] = c.addresses
	}
	if c.dhcp4 {
		dev["dhcp4"] = true
	}
	if c.dhcp6 {
		dev["dhcp6"] = true
	}
	if c.acceptRA != nil {
		if _, set := dev["accept-ra"]; !set {
			dev["accept-ra"] = *c.acceptRA
		}
	}
	if len(c.routes) > 0 {
		routes := make([]map[string]any, len(c.routes))
		for i, r := range c.routes {
			routes[i] = map[string]any{"to": r.Network + "/" + strconv.Itoa(r.PrefixLen), "via": r.Gateway}
		}
		dev["routes"] = routes
	}
	if len(c.dns) > 0 {
		dev["nameservers"] = map[string]any{"addresses": c.dns}
	}
}

// Bond and bridge settings (kernel names, as network_data.json carries them after bond_ /
// bridge_) and their netplan names.
var (
	netplanBondParams = map[string]string{
		"miimon": "mii-monitor-interval", "lacp_rate": "lacp-rate", "updelay": "up-delay",
		"downdelay": "down-delay", "min_links": "min-links", "ad_select": "ad-select",
		"arp_interval": "arp-interval", "arp_ip_target": "arp-ip-targets", "arp_validate": "arp-validate",
		"arp_all_targets": "arp-all-targets", "fail_over_mac": "fail-over-mac-policy",
		"num_grat_arp": "gratuitous-arp", "primary": "primary", "primary_reselect": "primary-reselect-policy",
		"resend_igmp": "resend-igmp", "lp_interval": "learn-packet-interval",
		"all_slaves_active": "all-slaves-active", "packets_per_slave": "packets-per-slave",
	}
	netplanBridgeParams = map[string]string{
		"ageing_time": "ageing-time", "priority": "priority", "forward_delay": "forward-delay",
		"hello_time": "hello-time", "max_age": "max-age", "stp": "stp", "accept_ra": "accept-ra",
	}
)

func netplanParams(l Link, prefix string, names map[string]string, into map[string]any) error {
	for _, key := range slices.Sorted(maps.Keys(l.Params)) {
		name := strings.TrimPrefix(key, prefix)
		np, ok := names[name]
		if !ok {
			return fmt.Errorf("link %q: setting %q has no netplan equivalent; netplan knows %s", l.ID, name, strings.Join(slices.Sorted(maps.Keys(names)), ", "))
		}
		v := paramValue(l.Params[key])
		if np == "arp-ip-targets" {
			if s, isString := v.(string); isString {
				v = strings.Split(s, ",")
			}
		}
		into[np] = v
	}
	return nil
}
