package schematest_test

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/metalwire/metalwire/internal/schematest"
)

func TestValidateNetworkData(t *testing.T) {
	tests := []struct {
		name  string
		given string
		valid bool
	}{
		{name: "a minimal valid document, YAML", valid: true, given: `
links: [{id: eno1, type: phy, ethernet_mac_address: "52:54:00:00:00:01", mtu: 1500}]
networks: [{id: n1, network_id: n1, type: ipv4, link: eno1, ip_address: 192.168.0.10, netmask: 255.255.255.0, routes: []}]
services: []
`},
		{name: "the same as JSON", valid: true,
			given: `{"links":[{"id":"eno1","type":"phy","ethernet_mac_address":"52:54:00:00:00:01"}],"networks":[{"id":"n1","network_id":"n1","type":"ipv4_dhcp","link":"eno1","routes":[]}],"services":[]}`},
		{name: "a network without network_id, as upstream CAPM3 writes", valid: false, // the only flaw

			given: `{"links":[{"id":"eno1","type":"phy","ethernet_mac_address":"52:54:00:00:00:01"}],"networks":[{"id":"n1","type":"ipv4_dhcp","link":"eno1","routes":[]}],"services":[]}`},
		{name: "not a document", valid: false, given: "{"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := schematest.ValidateNetworkData(t, []byte(tt.given))
			if tt.valid {
				NewWithT(t).Expect(err).NotTo(HaveOccurred())
			} else {
				NewWithT(t).Expect(err).To(HaveOccurred())
			}
		})
	}
}

func TestNetplanGenerate(t *testing.T) {
	g := NewWithT(t)
	files, err := schematest.NetplanGenerate(t, []byte(`
network:
  version: 2
  ethernets:
    eno1: {match: {macaddress: "52:54:00:00:00:01"}, set-name: eno1, mtu: 9000}
    eno2: {match: {macaddress: "52:54:00:00:00:02"}}
  bonds:
    bond0: {interfaces: [eno1, eno2], parameters: {mode: active-backup}, addresses: [192.168.0.10/24]}
  vlans:
    vlan100: {id: 100, link: bond0, addresses: ["fd00::5/64"], routes: [{to: default, via: "fd00::1"}]}
`))
	g.Expect(err).NotTo(HaveOccurred())

	bond, ok := files.NetDev("bond0")
	g.Expect(ok).To(BeTrue(), "files: %v", files)
	g.Expect(bond.Get("NetDev", "Kind")).To(Equal("bond"))
	g.Expect(bond.Get("Bond", "Mode")).To(Equal("active-backup"))
	bondNet, _ := files.Network("bond0")
	g.Expect(bondNet["Network"]["Address"]).To(ConsistOf("192.168.0.10/24"))
	g.Expect(bondNet["Network"]["VLAN"]).To(ConsistOf("vlan100"))
	eno1, _ := files.Network("eno1")
	g.Expect(eno1.Get("Network", "Bond")).To(Equal("bond0"))
	vlan, _ := files.NetDev("vlan100")
	g.Expect(vlan.Get("VLAN", "Id")).To(Equal("100"))

	_, err = schematest.NetplanGenerate(t, []byte("network: {version: 2, vlans: {vlan5: {id: 5, link: nothere}}}"))
	g.Expect(err).To(MatchError(ContainSubstring("nothere")), "netplan refuses a VLAN on a device that is not defined")
}
