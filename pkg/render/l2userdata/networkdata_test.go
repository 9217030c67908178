package l2userdata_test

import (
	"net/netip"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/metalwire/metalwire/pkg/render"
	"github.com/metalwire/metalwire/pkg/render/l2userdata"
)

// A machine's rendered network data as pkg/render writes it for the seed's first template: the
// VLAN link bond0.1000 with an address from the pool and the seed's route; a layer 3 address on
// bond0 stays the host's.
func TestFromNetworkDataReadsTheVLANAddresses(t *testing.T) {
	g := NewWithT(t)
	nd := &render.NetworkData{
		Links: []render.Link{
			{Type: "phy", ID: "eth0", MAC: "0c:c4:7a:00:00:10"},
			{Type: "phy", ID: "eth1", MAC: "0c:c4:7a:00:00:11"},
			{Type: render.LinkBond, ID: "bond0", MAC: "0c:c4:7a:00:00:10", BondMode: "802.3ad", BondLinks: []string{"eth0", "eth1"}},
			{Type: render.LinkVLAN, ID: "bond0.1000", MAC: "0c:c4:7a:00:00:10", VLANID: 1000, VLANLink: "bond0"},
		},
		Networks: []render.Network{
			{ID: "bond0-ipv4", Type: render.NetworkIPv4, Link: "bond0", IPAddress: "147.75.1.2", Netmask: "255.255.255.254"},
			{ID: "bond0.1000-ipv4", Type: render.NetworkIPv4, Link: "bond0.1000", IPAddress: "10.60.10.5", Netmask: "255.255.255.0",
				Routes: []render.Route{{Network: "10.60.0.0", Netmask: "255.255.0.0", Gateway: "10.60.10.1"}}},
		},
	}
	doc, err := nd.YAML()
	g.Expect(err).NotTo(HaveOccurred())
	c, err := l2userdata.FromNetworkData(doc)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c).To(Equal(l2userdata.Config{
		Interfaces: []l2userdata.Interface{{Port: "bond0", VLAN: 1000, Address: netip.MustParsePrefix("10.60.10.5/24")}},
		Routes:     []l2userdata.Route{{Destination: netip.MustParsePrefix("10.60.0.0/16"), Gateway: "10.60.10.1"}},
	}))

	nd.Networks = nd.Networks[:1]
	doc, err = nd.YAML()
	g.Expect(err).NotTo(HaveOccurred())
	_, err = l2userdata.FromNetworkData(doc)
	g.Expect(err).To(MatchError(ContainSubstring("no static IPv4 address on a VLAN link")))
}
