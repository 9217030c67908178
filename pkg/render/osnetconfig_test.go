package render_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/pkg/render"
	"github.com/metalwire/metalwire/pkg/render/osnetconfig"
)

// renderOSNetConfig renders a networkData (YAML) for hostFacts' host: NICs eno1 and eno2, pools
// pool4 (192.168.10.5/24, gateway .1, DNS .2 and .3) and pool6 (2001:db8::5/64).
func renderOSNetConfig(t *testing.T, networkData string) (config, mapping map[string]any, err error) {
	t.Helper()
	g := NewWithT(t)
	var nd infrav1.NetworkData
	g.Expect(yaml.UnmarshalStrict([]byte(networkData), &nd)).To(Succeed())
	n, err := render.Networking(&nd, hostFacts())
	g.Expect(err).NotTo(HaveOccurred())
	onc, err := n.OSNetConfig(hostFacts().NICs)
	if err != nil {
		return nil, nil, err
	}
	g.Expect(osnetconfig.Validate(onc.Config)).To(Succeed(), "%s", onc.Config)
	g.Expect(osnetconfig.ValidateMapping(onc.Mapping)).To(Succeed())
	g.Expect(yaml.Unmarshal(onc.Config, &config)).To(Succeed())
	g.Expect(yaml.Unmarshal(onc.Mapping, &mapping)).To(Succeed())
	return config, mapping, nil
}

const twoEthernets = `
links:
  ethernets:
    - {type: phy, id: eno1, macAddress: {fromHostInterface: eno1}}
    - {type: phy, id: eno2, mtu: 9000, macAddress: {fromHostInterface: eno2}}
`

func TestOSNetConfig(t *testing.T) {
	tests := []struct {
		name        string
		networkData string
		want        []any          // network_config
		wantMapping map[string]any // interface_mapping
	}{
		{name: "static IPv4 from a pool, with its gateway as the default route and its DNS servers",
			networkData: twoEthernets + `
networks:
  ipv4:
    - id: n4
      link: eno1
      ipAddressFromIPPool: pool4
      routes: [{network: 0.0.0.0, gateway: {fromIPPool: pool4}}, {network: 10.0.0.0, prefix: 8, gateway: {string: 192.168.10.254}}]
services:
  dnsFromIPPool: pool4
`,
			want: []any{
				map[string]any{"type": "interface", "name": "eno1", "mtu": 1500.0, "use_dhcp": false,
					"addresses":   []any{map[string]any{"ip_netmask": "192.168.10.5/24"}},
					"routes":      []any{map[string]any{"default": true, "next_hop": "192.168.10.1"}, map[string]any{"ip_netmask": "10.0.0.0/8", "next_hop": "192.168.10.254"}},
					"dns_servers": []any{"192.168.10.2", "192.168.10.3"}},
				map[string]any{"type": "interface", "name": "eno2", "mtu": 9000.0, "use_dhcp": false},
			},
			wantMapping: map[string]any{}},
		{name: "DHCPv4 and DHCPv6 on one NIC, static IPv6 on the other",
			networkData: twoEthernets + `
networks:
  ipv4DHCP: [{id: d4, link: eno1}]
  ipv6DHCP: [{id: d6, link: eno1}]
  ipv6:
    - {id: n6, link: eno2, ipAddressFromIPPool: pool6, routes: [{network: "::", gateway: {fromIPPool: pool6}}]}
`,
			want: []any{
				map[string]any{"type": "interface", "name": "eno1", "mtu": 1500.0, "use_dhcp": true, "use_dhcpv6": true},
				map[string]any{"type": "interface", "name": "eno2", "mtu": 9000.0, "use_dhcp": false,
					"addresses": []any{map[string]any{"ip_netmask": "2001:db8::5/64"}},
					"routes":    []any{map[string]any{"default": true, "next_hop": "2001:db8::1"}}},
			},
			wantMapping: map[string]any{}},
		{name: "a bond with its members nested, a VLAN on it, links named apart from their NICs",
			networkData: `
links:
  ethernets:
    - {type: phy, id: nic1, macAddress: {fromHostInterface: eno1}}
    - {type: phy, id: nic2, macAddress: {fromHostInterface: eno2}}
  bonds:
    - id: bond0
      bondMode: 802.3ad
      bondXmitHashPolicy: layer3+4
      bondLinks: [nic1, nic2]
      parameters: [{name: miimon, value: 100}, {name: lacp_rate, value: fast}]
  vlans:
    - {id: storage, vlanID: 300, vlanLink: bond0, mtu: 9000}
networks:
  ipv4:
    - {id: s, link: storage, ipAddressFromIPPool: pool4}
  ipv4DHCP: [{id: d, link: bond0}]
services:
  dns: [9.9.9.9]
`,
			want: []any{
				map[string]any{"type": "linux_bond", "name": "bond0", "mtu": 1500.0, "use_dhcp": true,
					"bonding_options": "mode=802.3ad xmit_hash_policy=layer3+4 lacp_rate=fast miimon=100",
					"dns_servers":     []any{"9.9.9.9"},
					"members": []any{
						map[string]any{"type": "interface", "name": "nic1", "mtu": 1500.0, "use_dhcp": false},
						map[string]any{"type": "interface", "name": "nic2", "mtu": 1500.0, "use_dhcp": false},
					}},
				map[string]any{"type": "vlan", "vlan_id": 300.0, "device": "bond0", "mtu": 9000.0, "use_dhcp": false,
					"addresses":   []any{map[string]any{"ip_netmask": "192.168.10.5/24"}},
					"dns_servers": []any{"9.9.9.9"}},
			},
			wantMapping: map[string]any{"nic1": "52:54:00:00:00:01", "nic2": "52:54:00:00:00:02"}},
		{name: "a bridge over a NIC",
			networkData: twoEthernets + `
  bridges:
    - {id: br0, bridgeLinks: [eno2]}
networks:
  ipv4: [{id: b, link: br0, ipAddressFromIPPool: pool4}]
`,
			want: []any{
				map[string]any{"type": "interface", "name": "eno1", "mtu": 1500.0, "use_dhcp": false},
				map[string]any{"type": "linux_bridge", "name": "br0", "mtu": 1500.0, "use_dhcp": false,
					"addresses": []any{map[string]any{"ip_netmask": "192.168.10.5/24"}},
					"members":   []any{map[string]any{"type": "interface", "name": "eno2", "mtu": 9000.0, "use_dhcp": false}}},
			},
			wantMapping: map[string]any{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			config, mapping, err := renderOSNetConfig(t, tt.networkData)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(config["network_config"]).To(Equal(tt.want))
			g.Expect(mapping["interface_mapping"]).To(Equal(tt.wantMapping))
		})
	}
}

func TestOSNetConfigRefusals(t *testing.T) {
	tests := []struct {
		name        string
		networkData string
		want        string
	}{
		{name: "a link named after another NIC: os-net-config refuses an alias that is an active NIC's name",
			networkData: `
links:
  ethernets:
    - {type: phy, id: eno2, macAddress: {fromHostInterface: eno1}}
`,
			want: `link "eno2" is named "eno2", the name of the host's NIC with MAC 52:54:00:00:00:02, but its MAC is 52:54:00:00:00:01`},
		{name: "bridge settings linux_bridge has no field for",
			networkData: twoEthernets + `
  bridges:
    - {id: br0, bridgeLinks: [eno2], parameters: [{name: stp, value: true}]}
`,
			want: `link "br0": bridge settings (bridge_stp) have no os-net-config linux_bridge equivalent`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := renderOSNetConfig(t, tt.networkData)
			NewWithT(t).Expect(err).To(MatchError(ContainSubstring(tt.want)))
		})
	}
}
