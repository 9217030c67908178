package generate_test

import (
	"net/netip"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/metalwire/metalwire/pkg/generate"
)

const validNetworks = `infra:
  networks:
    net0:
      netmask: 24
      addressRange: {start: 192.168.0.10, end: 192.168.0.11}
      gateway: 192.168.0.1
      dnsServers: [8.8.8.8]
`

const validUnit = `controllers:
  replicas: 1
  hostSelector: metal3.io/controller: true
  networkConfig:
    - type: interface
      name: em0
      addresses:
        - ip_netmask: {{ ip['net0'] }}
  macMapping:
    node-0: {em0: "00:c8:7c:e6:f0:2e"}
`

// TestErrors lists every mistake the generator explains: each names the place and the fix.
func TestErrors(t *testing.T) {
	tests := []struct {
		name, given string
		wantErr     []string
	}{
		{name: "network without netmask", given: strings.Replace(validNetworks, "      netmask: 24\n", "", 1) + validUnit,
			wantErr: []string{"infra.networks.net0 has no netmask", "netmask: 24"}},
		{name: "network with neither addressRange nor addresses",
			given:   strings.Replace(validNetworks, "      addressRange: {start: 192.168.0.10, end: 192.168.0.11}\n", "", 1) + validUnit,
			wantErr: []string{"infra.networks.net0 has neither addressRange nor addresses", "add addressRange"}},
		{name: "network with both", given: strings.Replace(validNetworks, "gateway:", "addresses: [192.168.0.20]\n      gateway:", 1) + validUnit,
			wantErr: []string{"infra.networks.net0 has both addressRange and addresses"}},
		{name: "a range backwards", given: strings.Replace(validNetworks, "end: 192.168.0.11", "end: 192.168.0.9", 1) + validUnit,
			wantErr: []string{"infra.networks.net0.addressRange: end 192.168.0.9 comes before start"}},
		{name: "an address that is not one", given: strings.Replace(validNetworks, "8.8.8.8", "dns.google", 1) + validUnit,
			wantErr: []string{`infra.networks.net0.dnsServers[0]: "dns.google" is not an IP address`}},
		{name: "a template naming an undefined network", given: validNetworks + strings.Replace(validUnit, "ip['net0']", "ip['net9']", 1),
			wantErr: []string{"controllers.networkConfig uses ip['net9']", `no network "net9"`, "it has net0"}},
		{name: "a node of the unit missing from macMapping", given: validNetworks + strings.Replace(validUnit, "replicas: 1", "replicas: 2", 1),
			wantErr: []string{"controllers: replicas is 2 but macMapping maps 1 node(s) (node-0)", "add the interface MACs of the missing 1 node(s) under controllers.macMapping"}},
		{name: "a MAC given twice", given: validNetworks + strings.Replace(strings.Replace(validUnit, "replicas: 1", "replicas: 2", 1),
			`node-0: {em0: "00:c8:7c:e6:f0:2e"}`, `node-0: {em0: "00:c8:7c:e6:f0:2e"}`+"\n    node-1: {em0: \"00:C8:7C:E6:F0:2E\"}", 1),
			wantErr: []string{"MAC 00:c8:7c:e6:f0:2e is given twice, at controllers.macMapping.node-0.em0 and controllers.macMapping.node-1.em0"}},
		{name: "a MAC that is not one", given: validNetworks + strings.Replace(validUnit, `"00:c8:7c:e6:f0:2e"`, "nope", 1),
			wantErr: []string{`controllers.macMapping.node-0.em0: "nope" is not a MAC address`}},
		{name: "a unit without replicas", given: validNetworks + strings.Replace(validUnit, "  replicas: 1\n", "", 1),
			wantErr: []string{"controllers has no replicas"}},
		{name: "an unknown field", given: validNetworks + strings.Replace(validUnit, "replicas:", "replica: 1\n  replicas:", 1),
			wantErr: []string{"field replica not found"}},
		{name: "no units", given: validNetworks, wantErr: []string{"neither controllers nor nodepools"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := generate.Parse([]byte(tt.given))
			g := NewWithT(t)
			g.Expect(err).To(HaveOccurred())
			for _, w := range tt.wantErr {
				g.Expect(err.Error()).To(ContainSubstring(w))
			}
		})
	}
}

// TestGenerateErrors are the mistakes seen only when rendering or allocating.
func TestGenerateErrors(t *testing.T) {
	tests := []struct {
		name, given string
		state       generate.State
		wantErr     []string
	}{
		{name: "a range used up", given: validNetworks + validUnit,
			state:   generate.State{"net0": {"other-a": netip.MustParseAddr("192.168.0.10"), "other-b": netip.MustParseAddr("192.168.0.11")}},
			wantErr: []string{"network net0: addressRange 192.168.0.10-192.168.0.11 is used up", "widen infra.networks.net0.addressRange or free nodes with --delete", "for controllers-node-0"}},
		{name: "an addresses list used up", given: strings.Replace(validNetworks, "addressRange: {start: 192.168.0.10, end: 192.168.0.11}", "addresses: [192.168.0.10]", 1) + validUnit,
			state:   generate.State{"net0": {"other": netip.MustParseAddr("192.168.0.10")}},
			wantErr: []string{"network net0: all 1 of its addresses are held (other=192.168.0.10)", "add addresses to infra.networks.net0.addresses"}},
		{name: "a typo in the template", given: validNetworks + strings.Replace(validUnit, "name: em0", "name: em0\n      mtu: {{ config['net0'].mtu }}", 1),
			wantErr: []string{"controllers.networkConfig, rendering for controllers-node-0", "mtu"}},
		{name: "a rendered document that is not os-net-config", given: validNetworks + strings.Replace(validUnit, "name: em0", "name: em0\n      adresses: []", 1),
			wantErr: []string{"controllers.networkConfig, rendered for controllers-node-0: not valid os-net-config: network_config[0]", "adresses", "#/definitions/interface", "fix the template"}},
		{name: "an address without its prefix", given: validNetworks + strings.Replace(validUnit, "ip_netmask: {{ ip['net0'] }}", "ip_netmask: {{ config['net0'].gateway }}", 1),
			wantErr: []string{"not valid os-net-config: network_config[0].addresses[0].ip_netmask", "ipv4_cidr_string"}},
		{name: "a rendered document that is not YAML", given: validNetworks + strings.Replace(validUnit, "name: em0", "name: em0\n     bad: [", 1),
			wantErr: []string{"controllers.networkConfig, rendered for controllers-node-0: is not YAML"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			f, err := generate.Parse([]byte(tt.given))
			g.Expect(err).NotTo(HaveOccurred())
			state := tt.state
			if state == nil {
				state = generate.State{}
			}
			_, err = f.Generate(state, seedOptions)
			g.Expect(err).To(HaveOccurred())
			for _, w := range tt.wantErr {
				g.Expect(err.Error()).To(ContainSubstring(w))
			}
		})
	}
}
