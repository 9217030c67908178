package osnetconfig_test

import (
	"errors"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/metalwire/metalwire/pkg/render/osnetconfig"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		given string
		// want lists the problems (path and a part of the message and schema path); empty: valid.
		want []osnetconfig.Problem
		// wantErr, for documents refused before the schema: a part of the message.
		wantErr string
	}{
		{name: "an interface with a static address, a default route and DNS", given: `
network_config:
- type: interface
  name: nic1
  mtu: 9000
  use_dhcp: false
  addresses: [{ip_netmask: 192.168.0.10/24}, {ip_netmask: "fd00::10/64"}]
  routes: [{default: true, next_hop: 192.168.0.1}, {ip_netmask: 10.0.0.0/8, next_hop: 192.168.0.254}]
  dns_servers: [8.8.8.8, "2001:4860:4860::8888"]
  domain: [example.com]
`},
		{name: "the bare list, as os-net-config validates after reading the file",
			given: `[{type: interface, name: nic1, use_dhcp: true}]`},
		{name: "a bond of two interfaces and a VLAN on it", given: `
network_config:
- type: linux_bond
  name: bond0
  bonding_options: "mode=802.3ad miimon=100"
  members: [{type: interface, name: nic1, primary: true}, {type: interface, name: nic2}]
- type: vlan
  device: bond0
  vlan_id: 100
  addresses: [{ip_netmask: 10.1.0.5/24}]
`},
		{name: "YAML 1.1 booleans, as PyYAML reads them", given: `network_config: [{type: interface, name: nic1, use_dhcp: yes, defroute: no}]`},
		{name: "an address without its prefix",
			given: `network_config: [{type: interface, name: nic1, addresses: [{ip_netmask: 192.168.0.10}]}]`,
			want: []osnetconfig.Problem{
				{Path: "network_config[0].addresses[0].ip_netmask", Message: "ipv4_cidr_string", SchemaPath: "#/definitions/ipv4_cidr_string/pattern"},
				{Path: "network_config[0].addresses[0].ip_netmask", Message: "ipv6_cidr_string", SchemaPath: "#/definitions/ipv6_cidr_string/pattern"},
			}},
		{name: "a field os-net-config does not know, reported for the type the object names",
			given: `network_config: [{type: interface, name: nic1, mtuu: 1500}]`,
			want:  []osnetconfig.Problem{{Path: "network_config[0]", Message: "'mtuu' not allowed", SchemaPath: "#/definitions/interface/additionalProperties"}}},
		{name: "a vlan without vlan_id",
			given: `network_config: [{type: interface, name: nic1}, {type: vlan, device: nic1}]`,
			want:  []osnetconfig.Problem{{Path: "network_config[1]", Message: "vlan_id", SchemaPath: "#/definitions/vlan/required"}}},
		{name: "a linux_bond without members",
			given: `network_config: [{type: linux_bond, name: bond0}]`,
			want:  []osnetconfig.Problem{{Path: "network_config[0]", Message: "members", SchemaPath: "#/definitions/linux_bond/required"}}},
		{name: "a route with neither default nor ip_netmask",
			given: `network_config: [{type: interface, name: nic1, routes: [{next_hop: 192.168.0.1}]}]`,
			want: []osnetconfig.Problem{ // the schema's alternatives, each named
				{Path: "network_config[0].routes[0]", Message: "'default'", SchemaPath: "#/definitions/route/allOf/0/anyOf/0/required"},
				{Path: "network_config[0].routes[0]", Message: "'destination'", SchemaPath: "#/definitions/route/allOf/0/anyOf/1/oneOf/0/required"},
				{Path: "network_config[0].routes[0]", Message: "'ip_netmask'", SchemaPath: "#/definitions/route/allOf/0/anyOf/1/oneOf/1/required"},
			}},
		{name: "a DNS server that is not an address",
			given: `network_config: [{type: interface, name: nic1, dns_servers: [dns.example.com]}]`,
			want: []osnetconfig.Problem{
				{Path: "network_config[0].dns_servers[0]", Message: "ipv4_address_string", SchemaPath: "#/definitions/ipv4_address_string/pattern"},
				{Path: "network_config[0].dns_servers[0]", Message: "ipv6_address_string", SchemaPath: "#/definitions/ipv6_address_string/pattern"},
			}},
		{name: "a domain with two dots in a row: the pattern needs lookaheads, which RE2 lacks",
			given: `network_config: [{type: interface, name: nic1, domain: [example.com, "a..b"]}]`,
			want:  []osnetconfig.Problem{{Path: "network_config[0].domain[1]", Message: `"a..b"`, SchemaPath: "#/definitions/domain_name_string/pattern"}}},
		{name: "a type os-net-config does not have",
			given: `network_config: [{type: ethernet, name: nic1}]`,
			want:  []osnetconfig.Problem{{Path: "network_config[0].type", Message: `"ethernet" is not a type os-net-config knows; use one of interface, route_table, sriov_pf, sriov_vf, vlan,`, SchemaPath: "#/items/oneOf"}}},
		{name: "an empty list", given: `network_config: []`,
			want: []osnetconfig.Problem{{Path: "network_config", Message: "minItems"}}},
		{name: "a typo in network_config", given: `network-config: [{type: interface, name: nic1}]`,
			wantErr: "no network_config"},
		{name: "a key beside network_config", given: "network_config: [{type: interface, name: nic1}]\nroutes: []",
			wantErr: `top-level key "routes"`},
		{name: "not YAML", given: "network_config: [", wantErr: "not YAML"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			err := osnetconfig.Validate([]byte(tt.given))
			switch {
			case tt.wantErr != "":
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			case len(tt.want) == 0:
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			var verr *osnetconfig.Error
			g.Expect(errors.As(err, &verr)).To(BeTrue(), "want *osnetconfig.Error, got %v", err)
			g.Expect(verr.Problems).To(HaveLen(len(tt.want)), "problems: %v", verr.Problems)
			for i, w := range tt.want {
				got := verr.Problems[i]
				g.Expect(got.Path).To(Equal(w.Path), "problem %d: %v", i, got)
				g.Expect(got.Message).To(ContainSubstring(w.Message), "problem %d: %v", i, got)
				g.Expect(got.SchemaPath).To(HavePrefix(w.SchemaPath), "problem %d: %v", i, got)
				g.Expect(err.Error()).To(ContainSubstring(got.Path))
			}
		})
	}
}
