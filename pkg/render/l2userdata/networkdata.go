package l2userdata

import (
	"fmt"
	"net/netip"

	"sigs.k8s.io/yaml"
)

// The keys of a rendered network_data.json this package reads (pkg/render writes them).
type networkData struct {
	Links []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		VLANID   int    `json:"vlan_id"`
		VLANLink string `json:"vlan_link"`
	} `json:"links"`
	Networks []struct {
		Link      string `json:"link"`
		Type      string `json:"type"`
		IPAddress string `json:"ip_address"`
		Netmask   string `json:"netmask"`
		Routes    []struct {
			Network string `json:"network"`
			Netmask string `json:"netmask"`
			Gateway string `json:"gateway"`
		} `json:"routes"`
	} `json:"networks"`
}

// FromNetworkData is a machine's VLAN configuration read from its rendered network data (the
// networkData Secret of its Metal3Data: network_data.json, as YAML or JSON): every static IPv4
// network on a VLAN link becomes a sub-interface of the link's parent port, and the networks'
// routes the routes. Networks on other links are left to the host (they are its layer 3 side).
// A network data without any VLAN address is an error: there is nothing to configure.
func FromNetworkData(doc []byte) (Config, error) {
	var nd networkData
	if err := yaml.Unmarshal(doc, &nd); err != nil {
		return Config{}, fmt.Errorf("the network data is not network_data.json: %w", err)
	}
	type vlan struct {
		port string
		id   int
	}
	vlans := map[string]vlan{}
	for _, l := range nd.Links {
		if l.Type == "vlan" {
			vlans[l.ID] = vlan{port: l.VLANLink, id: l.VLANID}
		}
	}
	var c Config
	seen := map[Route]bool{}
	for i, n := range nd.Networks {
		v, ok := vlans[n.Link]
		if !ok || n.Type != "ipv4" {
			continue
		}
		addr, err := prefixOf(n.IPAddress, n.Netmask)
		if err != nil {
			return Config{}, fmt.Errorf("networks[%d] (link %s): %w", i, n.Link, err)
		}
		c.Interfaces = append(c.Interfaces, Interface{Port: v.port, VLAN: v.id, Address: addr})
		for j, r := range n.Routes {
			dest, err := prefixOf(r.Network, r.Netmask)
			if err != nil {
				return Config{}, fmt.Errorf("networks[%d].routes[%d]: %w", i, j, err)
			}
			route := Route{Destination: dest.Masked(), Gateway: r.Gateway}
			if !seen[route] {
				seen[route] = true
				c.Routes = append(c.Routes, route)
			}
		}
	}
	if len(c.Interfaces) == 0 {
		return Config{}, fmt.Errorf("the network data has no static IPv4 address on a VLAN link: nothing for the VLAN user-data to configure")
	}
	return c, nil
}

func prefixOf(ip, netmask string) (netip.Prefix, error) {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("address %q is not an IP address", ip)
	}
	m, err := netip.ParseAddr(netmask)
	if err != nil || !m.Is4() {
		return netip.Prefix{}, fmt.Errorf("netmask %q of %s is not an IPv4 netmask", netmask, ip)
	}
	b := m.As4()
	bits := 0
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	for v&0x80000000 != 0 {
		bits++
		v <<= 1
	}
	if v != 0 {
		return netip.Prefix{}, fmt.Errorf("netmask %q of %s is not contiguous", netmask, ip)
	}
	return netip.PrefixFrom(a, bits), nil
}
