package render_test

import (
	"errors"
	"testing"

	. "github.com/onsi/gomega"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/pkg/render"
)

// A bond with bondFrom gets the cards the fabric bonded, by MAC, and the network's mode: an
// 802.3ad bond with its lacp_rate (or active-backup for a static LAG) in network_data.json,
// netplan, nmstate and os-net-config alike; without the fabric's bond the error names the field
// and the network.
func TestBondFromFabric(t *testing.T) {
	g := NewWithT(t)
	links := infrav1.NetworkDataLinks{
		Bonds: []infrav1.NetworkDataLinkBond{{ID: "bond0", MTU: 9000, BondFrom: &infrav1.BondSource{ClusterNetwork: "prod", Network: "control"}}},
		Vlans: []infrav1.NetworkDataLinkVlan{{ID: "storage", VlanLink: "bond0", VlanIDFrom: &infrav1.VLANIDSource{ClusterNetwork: "prod", Network: "storage"}}},
	}
	nd := &infrav1.NetworkData{Links: &links}
	ref := render.VLANRef{ClusterNetwork: "prod", Network: "control"}
	g.Expect(render.BondRefs(nd)).To(Equal([]render.VLANRef{ref}))

	f := hostFacts()
	f.VLANs = map[render.VLANRef]int32{{ClusterNetwork: "prod", Network: "storage"}: 1002}
	_, err := linkJSON(t, links, f)
	var re *render.Error
	g.Expect(errors.As(err, &re)).To(BeTrue(), "%v", err)
	g.Expect(re.Reason).To(Equal(render.ReasonBondUnresolved))
	g.Expect(re.VLAN).To(Equal(ref))
	g.Expect(err.Error()).To(Equal("networkData.links.bonds[0].bondFrom: ClusterNetwork prod has not bonded this host's cards for network control; the bond is rendered once the host is given the network"))

	f.Bonds = map[render.VLANRef]render.FabricBond{ref: {Mode: "802.3ad", LACPRate: "fast", MACs: []string{"52:54:00:00:00:02", "52:54:00:00:00:01"}}}
	out, err := linkJSON(t, links, f)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(ContainElement(And(HaveKeyWithValue("id", "bond0"), HaveKeyWithValue("type", "bond"), HaveKeyWithValue("bond_mode", "802.3ad"),
		HaveKeyWithValue("bond_links", []any{"bond0-0", "bond0-1"}), HaveKeyWithValue("bond_lacp_rate", "fast"))))
	g.Expect(out).To(ContainElement(And(HaveKeyWithValue("id", "bond0-0"), HaveKeyWithValue("type", "phy"), HaveKeyWithValue("ethernet_mac_address", "52:54:00:00:00:02"), HaveKeyWithValue("mtu", float64(9000)))))
	g.Expect(out).To(ContainElement(And(HaveKeyWithValue("id", "bond0-1"), HaveKeyWithValue("ethernet_mac_address", "52:54:00:00:00:01"))))
	g.Expect(links.Bonds[0].BondLinks).To(BeEmpty(), "the template itself is not changed")

	rendered, err := render.Networking(nd, f)
	g.Expect(err).NotTo(HaveOccurred())
	netplan, err := rendered.Netplan()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(netplan)).To(And(ContainSubstring("mode: 802.3ad"), ContainSubstring("lacp-rate: fast"), ContainSubstring("52:54:00:00:00:02"), ContainSubstring("52:54:00:00:00:01")))
	nmstate, err := rendered.NMState()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(nmstate)).To(And(ContainSubstring("802.3ad"), ContainSubstring("lacp_rate: fast")))
	onc, err := rendered.OSNetConfig(f.NICs)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(onc).NotTo(BeNil())

	// A static LAG: active-backup, no LACP rate.
	f.Bonds[ref] = render.FabricBond{Mode: "active-backup", MACs: []string{"52:54:00:00:00:01", "52:54:00:00:00:02"}}
	out, err = linkJSON(t, links, f)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(ContainElement(And(HaveKeyWithValue("id", "bond0"), HaveKeyWithValue("bond_mode", "active-backup"), Not(HaveKey("bond_lacp_rate")))))

	// One card is no bond.
	f.Bonds[ref] = render.FabricBond{Mode: "802.3ad", MACs: []string{"52:54:00:00:00:01"}}
	_, err = linkJSON(t, links, f)
	g.Expect(err).To(MatchError("networkData.links.bonds[0].bondFrom: network control of ClusterNetwork prod gives this host 1 bonded card(s); a bond needs linkAggregation 2 or more"))
}
