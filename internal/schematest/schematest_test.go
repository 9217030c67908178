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
