package render_test

import (
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/schematest"
	"github.com/metalwire/metalwire/pkg/render"
)

// bondTemplate is a bond of the two NICs with the given settings and a DHCP network on it.
func bondTemplate(params ...infrav1.NetworkDataLinkBondParam) *infrav1.NetworkData {
	links := twoNICs()
	links.Bonds = []infrav1.NetworkDataLinkBond{{ID: "bond0", BondMode: "balance-xor", BondXmitHashPolicy: "layer3+4", BondLinks: []infrav1.LinkID{"eno1", "eno2"}, Parameters: params}}
	return &infrav1.NetworkData{Links: &links, Networks: &infrav1.NetworkDataNetworks{IPv4DHCP: []infrav1.NetworkDataIPv4DHCP{{ID: "n", Link: "bond0"}}}}
}

func bondParam(name, raw string) infrav1.NetworkDataLinkBondParam {
	return infrav1.NetworkDataLinkBondParam{Name: name, Value: &apiextensionsv1.JSON{Raw: []byte(raw)}}
}

func TestNetplanBondSettings(t *testing.T) {
	tests := []struct {
		name  string
		given []infrav1.NetworkDataLinkBondParam
		want  map[string]any
	}{
		{"mode and hash policy only", nil, map[string]any{"mode": "balance-xor", "transmit-hash-policy": "layer3+4"}},
		{"kernel names become netplan names", []infrav1.NetworkDataLinkBondParam{bondParam("miimon", "100"), bondParam("lacp_rate", `"fast"`), bondParam("updelay", "200")},
			map[string]any{"mode": "balance-xor", "transmit-hash-policy": "layer3+4", "mii-monitor-interval": 100.0, "lacp-rate": "fast", "up-delay": 200.0}},
		{"arp_ip_target as a comma-separated string becomes a list", []infrav1.NetworkDataLinkBondParam{bondParam("arp_ip_target", `"10.0.0.1,10.0.0.2"`)},
			map[string]any{"mode": "balance-xor", "transmit-hash-policy": "layer3+4", "arp-ip-targets": []any{"10.0.0.1", "10.0.0.2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			nd, err := render.Networking(bondTemplate(tt.given...), hostFacts())
			g.Expect(err).NotTo(HaveOccurred())
			b, err := nd.Netplan()
			g.Expect(err).NotTo(HaveOccurred())
			var got netplanDoc
			g.Expect(yaml.Unmarshal(b, &got)).To(Succeed())
			bond := got.Network.Bonds["bond0"]
			g.Expect(bond.Parameters).To(Equal(tt.want))
			g.Expect(bond.Interfaces).To(Equal([]string{"eno1", "eno2"}))
			g.Expect(bond.MACAddress).To(Equal("52:54:00:00:00:01"), "the first member's MAC")
			g.Expect(bond.DHCP4).To(BeTrue())

			// netplan itself takes the settings and writes the bond with its mode and members.
			nd2, err := schematest.NetplanGenerate(t, b)
			g.Expect(err).NotTo(HaveOccurred())
			dev, ok := nd2.NetDev("bond0")
			g.Expect(ok).To(BeTrue())
			g.Expect(dev.Get("Bond", "Mode")).To(Equal("balance-xor"))
			g.Expect(dev.Get("Bond", "TransmitHashPolicy")).To(Equal("layer3+4"))
			for _, m := range []string{"eno1", "eno2"} {
				u, _ := nd2.Network(m)
				g.Expect(u.Get("Network", "Bond")).To(Equal("bond0"))
			}
		})
	}
}

func TestNetplanRefusesSettingsItCannotExpress(t *testing.T) {
	g := NewWithT(t)
	nd, err := render.Networking(bondTemplate(bondParam("tlb_dynamic_lb", "1")), hostFacts())
	g.Expect(err).NotTo(HaveOccurred(), "network_data.json passes any bond_ setting through")
	_, err = nd.Netplan()
	g.Expect(err).To(MatchError(ContainSubstring(`link "bond0": setting "tlb_dynamic_lb" has no netplan equivalent; netplan knows ad_select`)))
	_, err = nd.NMState()
	g.Expect(err).NotTo(HaveOccurred(), "nmstate takes kernel bond option names as they are")
}

func TestNMStateBond(t *testing.T) {
	g := NewWithT(t)
	nd, err := render.Networking(bondTemplate(bondParam("miimon", "100")), hostFacts())
	g.Expect(err).NotTo(HaveOccurred())
	b, err := nd.NMState()
	g.Expect(err).NotTo(HaveOccurred())
	var got struct {
		Interfaces []map[string]any `json:"interfaces"`
	}
	g.Expect(yaml.Unmarshal(b, &got)).To(Succeed())
	g.Expect(got.Interfaces).To(HaveLen(3))
	g.Expect(got.Interfaces[0]).To(And(HaveKeyWithValue("name", "eno1"), HaveKeyWithValue("type", "ethernet"),
		HaveKeyWithValue("identifier", "mac-address"), HaveKeyWithValue("mac-address", "52:54:00:00:00:01")))
	bond := got.Interfaces[2]
	g.Expect(bond).To(And(HaveKeyWithValue("name", "bond0"), HaveKeyWithValue("type", "bond")))
	g.Expect(bond["link-aggregation"]).To(Equal(map[string]any{
		"mode": "balance-xor", "port": []any{"eno1", "eno2"},
		"options": map[string]any{"miimon": 100.0, "xmit_hash_policy": "layer3+4"},
	}))
	g.Expect(bond["ipv4"]).To(Equal(map[string]any{"enabled": true, "dhcp": true}))
}
