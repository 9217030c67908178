package render

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/metalwire/metalwire/pkg/render/yamlout"
)

// NMState writes the network as an nmstate desired state (YAML), for NetworkManager hosts.
// Ethernets are matched by MAC (identifier: mac-address, nmstate 2.2 and later); bonds, bridges
// and VLANs are named by their name, else their id.
func (n *NetworkData) NMState() ([]byte, error) {
	l3, err := n.layer3()
	if err != nil {
		return nil, err
	}
	// Physical interfaces first, then what is built on them: easier to read, and the order
	// nmstate itself reports.
	rank := func(l Link) int {
		switch {
		case l.Type == LinkBond:
			return 1
		case l.Bridge:
			return 2
		case l.Type == LinkVLAN:
			return 3
		}
		return 0
	}
	links := slices.Clone(n.Links)
	slices.SortStableFunc(links, func(a, b Link) int { return rank(a) - rank(b) })

	ifaces := make([]map[string]any, 0, len(links))
	var routes []map[string]any
	var dns []string
	for _, l := range links {
		name := deviceName(l)
		iface := map[string]any{"name": name, "state": "up", "mtu": l.MTU, "mac-address": strings.ToUpper(l.MAC)}
		switch {
		case l.Type == LinkBond:
			iface["type"] = "bond"
			agg := map[string]any{"mode": l.BondMode, "port": n.deviceNames(l.BondLinks)}
			opts := map[string]any{}
			if l.BondXmitHashPolicy != "" {
				opts["xmit_hash_policy"] = l.BondXmitHashPolicy
			}
			for k, v := range l.Params {
				opts[strings.TrimPrefix(k, "bond_")] = paramValue(v)
			}
			if len(opts) > 0 {
				agg["options"] = opts
			}
			iface["link-aggregation"] = agg
		case l.Bridge:
			iface["type"] = "linux-bridge"
			ports := make([]map[string]any, len(l.BridgeLinks))
			for i, p := range n.deviceNames(l.BridgeLinks) {
				ports[i] = map[string]any{"name": p}
			}
			bridge := map[string]any{"port": ports}
			opts, err := nmstateBridgeOptions(l)
			if err != nil {
				return nil, err
			}
			if len(opts) > 0 {
				bridge["options"] = opts
			}
			iface["bridge"] = bridge
		case l.Type == LinkVLAN:
			iface["type"] = "vlan"
			iface["vlan"] = map[string]any{"base-iface": n.deviceNames([]string{l.VLANLink})[0], "id": l.VLANID}
		default:
			iface["type"] = "ethernet"
			iface["identifier"] = "mac-address"
		}
		ipv4 := map[string]any{"enabled": false}
		ipv6 := map[string]any{"enabled": false}
		if c, ok := l3[l.ID]; ok {
			ipv4, ipv6 = c.nmstateIP()
			for _, r := range c.routes {
				dest := r.Network + "/" + fmt.Sprint(r.PrefixLen)
				routes = append(routes, map[string]any{"destination": dest, "next-hop-address": r.Gateway, "next-hop-interface": name})
			}
			for _, d := range c.dns {
				dns = appendNew(dns, d)
			}
		}
		if raw, ok := l.Params["bridge_accept_ra"]; ok && ipv6Enabled(ipv6) {
			ipv6["autoconf"] = paramValue(raw) // the bridge's own setting wins, as in netplan
		}
		iface["ipv4"], iface["ipv6"] = ipv4, ipv6
		ifaces = append(ifaces, iface)
	}
	state := map[string]any{"interfaces": ifaces}
	if len(routes) > 0 {
		state["routes"] = map[string]any{"config": routes}
	}
	if len(dns) > 0 {
		state["dns-resolver"] = map[string]any{"config": map[string]any{"server": dns}}
	}
	return yamlout.Marshal(state)
}

func (c *layer3) nmstateIP() (ipv4, ipv6 map[string]any) {
	var v4, v6 []map[string]any
	for _, a := range c.addresses {
		p := netip.MustParsePrefix(a) // written by layer3 from parsed addresses
		entry := map[string]any{"ip": p.Addr().String(), "prefix-length": p.Bits()}
		if p.Addr().Is4() {
			v4 = append(v4, entry)
		} else {
			v6 = append(v6, entry)
		}
	}
	ipv4 = map[string]any{"enabled": c.dhcp4 || len(v4) > 0}
	if c.dhcp4 {
		ipv4["dhcp"] = true
	} else if len(v4) > 0 {
		ipv4["dhcp"], ipv4["address"] = false, v4
	}
	autoconf := c.acceptRA != nil && *c.acceptRA
	enabled6 := c.dhcp6 || autoconf || len(v6) > 0
	ipv6 = map[string]any{"enabled": enabled6}
	if enabled6 {
		ipv6["dhcp"], ipv6["autoconf"] = c.dhcp6, autoconf
		if len(v6) > 0 {
			ipv6["address"] = v6
		}
	}
	return ipv4, ipv6
}

// nmstateBridgeOptions maps bridge settings to nmstate's linux-bridge options.
func nmstateBridgeOptions(l Link) (map[string]any, error) {
	stpNames := map[string]string{"stp": "enabled", "forward_delay": "forward-delay", "hello_time": "hello-time", "max_age": "max-age", "priority": "priority"}
	opts := map[string]any{}
	stp := map[string]any{}
	for _, key := range slices.Sorted(maps.Keys(l.Params)) {
		name := strings.TrimPrefix(key, "bridge_")
		v := paramValue(l.Params[key])
		switch {
		case name == "accept_ra":
			// Carried by the interface's ipv6 autoconf, not a bridge option.
		case name == "ageing_time":
			opts["mac-ageing-time"] = v
		case stpNames[name] != "":
			stp[stpNames[name]] = v
		default:
			return nil, fmt.Errorf("link %q: setting %q has no nmstate equivalent; nmstate knows accept_ra, ageing_time, %s", l.ID, name, strings.Join(slices.Sorted(maps.Keys(stpNames)), ", "))
		}
	}
	if len(stp) > 0 {
		opts["stp"] = stp
	}
	return opts, nil
}

func ipv6Enabled(ipv6 map[string]any) bool {
	enabled, _ := ipv6["enabled"].(bool)
	return enabled
}
