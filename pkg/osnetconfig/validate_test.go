package osnetconfig_test

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/metalwire/metalwire/pkg/osnetconfig"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		given   string
		wantErr string // "" when valid
	}{
		{name: "the seed's rendered configuration", given: `
network_config:
- type: ovs_bridge
  name: br-ctlplane
  addresses: [{ip_netmask: 192.168.0.10/24}]
  routes: [{default: true, next_hop: 192.168.0.1}]
  dns_servers: ['8.8.8.8', '8.8.4.4']
  members:
  - type: ovs_bond
    name: bond1
    members: [{type: interface, name: em1}, {type: interface, name: em2}]
- type: interface
  name: em0
  addresses: [{ip_netmask: 192.168.1.10/24}]
`},
		{name: "a bare list", given: "- {type: interface, name: em0, use_dhcp: true}\n"},
		{name: "a domain name, checked with the lookahead pattern", given: "- {type: interface, name: em0, domain: [example.com]}\n"},
		{name: "an address without prefix", given: "- {type: interface, name: em0, addresses: [{ip_netmask: 192.168.0.10}]}\n",
			wantErr: "/0/addresses/0/ip_netmask"},
		{name: "an unknown property", given: "- {type: interface, name: em0, adresses: []}\n", wantErr: "adresses"},
		{name: "a vlan without vlan_id", given: "- {type: vlan, device: em0}\n", wantErr: "vlan_id"},
		{name: "an unknown type", given: "- {type: bridge, name: br0}\n", wantErr: "/0"},
		{name: "a DNS server that is not an address", given: "- {type: interface, name: em0, dns_servers: [dns.example]}\n",
			wantErr: "/0/dns_servers/0"},
		{name: "not YAML", given: "- {type: interface", wantErr: "not YAML"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			err := osnetconfig.Validate([]byte(tt.given))
			if tt.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
		})
	}
}

func TestValidateMapping(t *testing.T) {
	g := NewWithT(t)
	g.Expect(osnetconfig.ValidateMapping(map[string]string{"em0": "00:c8:7c:e6:f0:2e", "em1": "eno2"})).To(Succeed())
	g.Expect(osnetconfig.ValidateMapping(map[string]string{"em0": "00:c8:7c:e6:f0:2e", "em1": "00:C8:7C:E6:F0:2E"})).
		To(MatchError(ContainSubstring("mapped twice, to em0 and em1")))
	g.Expect(osnetconfig.ValidateMapping(map[string]string{"em0": ""})).To(MatchError(ContainSubstring("interface_mapping.em0 is empty")))
}
