package render_test

import (
	"encoding/json"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/pkg/render"
)

// linkJSON renders links and returns them as network_data.json objects.
func linkJSON(t *testing.T, links infrav1.NetworkDataLinks, f *render.Facts) ([]map[string]any, error) {
	t.Helper()
	nd, err := render.Networking(&infrav1.NetworkData{Links: &links}, f)
	if err != nil {
		return nil, err
	}
	if err := validate(t, nd); err != nil {
		t.Fatalf("rendered links fail the Ironic schema: %v", err)
	}
	b, err := json.Marshal(nd.Links)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out, nil
}

func TestLinks(t *testing.T) {
	bond := func(id string, m *infrav1.NetworkLinkEthernetMac, members ...infrav1.LinkID) infrav1.NetworkDataLinkBond {
		return infrav1.NetworkDataLinkBond{ID: infrav1.LinkID(id), BondMode: "active-backup", MACAddress: m, BondLinks: members}
	}
	tests := []struct {
		name  string
		given infrav1.NetworkDataLinks
		facts func(*render.Facts)
		want  []map[string]any
	}{
		{"ethernet from a host NIC, MTU defaults to 1500", infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{eth("nic", nic("eno2"))}}, nil,
			[]map[string]any{{"type": "phy", "id": "nic", "mtu": 1500.0, "ethernet_mac_address": "52:54:00:00:00:02"}}},
		{"ethernet with a name, a fixed MAC normalised to lower-case colons, another type", infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{
			{Type: "tap", ID: "t0", Name: "tap0", MTU: 9000, MACAddress: mac("AA-BB-CC-00-11-22")},
		}}, nil,
			[]map[string]any{{"type": "tap", "id": "t0", "name": "tap0", "mtu": 9000.0, "ethernet_mac_address": "aa:bb:cc:00:11:22"}}},
		{"ethernet MAC from an annotation", infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{
			eth("e", &infrav1.NetworkLinkEthernetMac{FromAnnotation: &infrav1.NetworkLinkEthernetMacFromAnnotation{Object: "machine", Annotation: "mac"}}),
		}}, nil,
			[]map[string]any{{"type": "phy", "id": "e", "mtu": 1500.0, "ethernet_mac_address": "aa:bb:cc:dd:ee:01"}}},
		{"bond takes its first member's MAC; bonds are written first; parameters as bond_<name>", infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{eth("a", nic("eno2")), eth("b", nic("eno1"))},
			Bonds: []infrav1.NetworkDataLinkBond{{ID: "bond0", BondMode: "802.3ad", BondXmitHashPolicy: "layer2+3", BondLinks: []infrav1.LinkID{"a", "b"},
				Parameters: []infrav1.NetworkDataLinkBondParam{{Name: "miimon", Value: &apiextensionsv1.JSON{Raw: []byte("100")}}, {Name: "bond_lacp_rate", Value: &apiextensionsv1.JSON{Raw: []byte(`"fast"`)}}}}},
		}, nil,
			[]map[string]any{
				{"type": "bond", "id": "bond0", "mtu": 1500.0, "ethernet_mac_address": "52:54:00:00:00:02", "bond_mode": "802.3ad",
					"bond_links": []any{"a", "b"}, "bond_xmit_hash_policy": "layer2+3", "bond_miimon": 100.0, "bond_lacp_rate": "fast"},
				{"type": "phy", "id": "a", "mtu": 1500.0, "ethernet_mac_address": "52:54:00:00:00:02"},
				{"type": "phy", "id": "b", "mtu": 1500.0, "ethernet_mac_address": "52:54:00:00:00:01"},
			}},
		{"bond with its own MAC and no parameters", infrav1.NetworkDataLinks{
			Ethernets: []infrav1.NetworkDataLinkEthernet{eth("a", nic("eno1"))},
			Bonds:     []infrav1.NetworkDataLinkBond{bond("bond0", mac("02:00:00:00:00:b0"), "a")},
		}, nil,
			[]map[string]any{
				{"type": "bond", "id": "bond0", "mtu": 1500.0, "ethernet_mac_address": "02:00:00:00:00:b0", "bond_mode": "active-backup", "bond_links": []any{"a"}},
				{"type": "phy", "id": "a", "mtu": 1500.0, "ethernet_mac_address": "52:54:00:00:00:01"},
			}},
		{"VLAN takes its parent's MAC, through a bond; VLANs are written after ethernets", infrav1.NetworkDataLinks{
			Vlans:     []infrav1.NetworkDataLinkVlan{{ID: "v10", VlanID: ptr.To[int32](10), VlanLink: "bond0"}},
			Ethernets: []infrav1.NetworkDataLinkEthernet{eth("a", nic("eno2"))},
			Bonds:     []infrav1.NetworkDataLinkBond{bond("bond0", nil, "a")},
		}, nil,
			[]map[string]any{
				{"type": "bond", "id": "bond0", "mtu": 1500.0, "ethernet_mac_address": "52:54:00:00:00:02", "bond_mode": "active-backup", "bond_links": []any{"a"}},
				{"type": "phy", "id": "a", "mtu": 1500.0, "ethernet_mac_address": "52:54:00:00:00:02"},
				{"type": "vlan", "id": "v10", "mtu": 1500.0, "vlan_mac_address": "52:54:00:00:00:02", "vlan_id": 10.0, "vlan_link": "bond0"},
			}},
		{"bridge is written last, with its members and settings", infrav1.NetworkDataLinks{
			Bridges:   []infrav1.NetworkDataLinkBridge{{ID: "br0", BridgeLinks: []infrav1.LinkID{"a"}, AcceptRA: ptr.To(true), Parameters: []infrav1.NetworkDataLinkBridgeParam{{Name: "stp", Value: &apiextensionsv1.JSON{Raw: []byte("false")}}}}},
			Ethernets: []infrav1.NetworkDataLinkEthernet{eth("a", nic("eno1"))},
			Vlans:     []infrav1.NetworkDataLinkVlan{{ID: "v", VlanID: ptr.To[int32](5), VlanLink: "a", MACAddress: mac("02:00:00:00:00:05")}},
		}, nil,
			[]map[string]any{
				{"type": "phy", "id": "a", "mtu": 1500.0, "ethernet_mac_address": "52:54:00:00:00:01"},
				{"type": "vlan", "id": "v", "mtu": 1500.0, "vlan_mac_address": "02:00:00:00:00:05", "vlan_id": 5.0, "vlan_link": "a"},
				{"type": "bridge", "id": "br0", "mtu": 1500.0, "ethernet_mac_address": "52:54:00:00:00:01", "bridge_links": []any{"a"}, "bridge_stp": false, "bridge_accept_ra": true},
			}},
		{"an ethernet of type bridge (a network_data.json link type) is not a bridge with members", infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{
			{Type: "bridge", ID: "br", MACAddress: nic("eno1")},
		}}, nil,
			[]map[string]any{{"type": "bridge", "id": "br", "mtu": 1500.0, "ethernet_mac_address": "52:54:00:00:00:01"}}},
		{"ethernet MAC from the boot MAC, no NICs needed", infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{
			eth("boot", &infrav1.NetworkLinkEthernetMac{FromBootMAC: ptr.To(true)}),
		}}, func(f *render.Facts) { f.NICs = nil; f.BootMAC = "52:54:00:AB:CD:EF" },
			[]map[string]any{{"type": "phy", "id": "boot", "mtu": 1500.0, "ethernet_mac_address": "52:54:00:ab:cd:ef"}}},
		{"pre-provisioning: MACs from a string and the host's annotation, no NICs needed", infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{
			eth("boot", &infrav1.NetworkLinkEthernetMac{FromAnnotation: &infrav1.NetworkLinkEthernetMacFromAnnotation{Object: "baremetalhost", Annotation: "boot-mac"}}),
		}}, func(f *render.Facts) {
			*f = *preprovFacts()
			f.Host.Annotations = map[string]string{"boot-mac": "52:54:00:00:00:99"}
		},
			[]map[string]any{{"type": "phy", "id": "boot", "mtu": 1500.0, "ethernet_mac_address": "52:54:00:00:00:99"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			f := hostFacts()
			if tt.facts != nil {
				tt.facts(f)
			}
			got, err := linkJSON(t, tt.given, f)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

func TestLinkErrors(t *testing.T) {
	param := func(name, raw string) infrav1.NetworkDataLinkBondParam {
		return infrav1.NetworkDataLinkBondParam{Name: name, Value: &apiextensionsv1.JSON{Raw: []byte(raw)}}
	}
	tests := []struct {
		name      string
		given     infrav1.NetworkDataLinks
		facts     func(*render.Facts)
		want      string
		retryable bool
	}{
		{"NIC not on the host lists the ones that are",
			infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{eth("a", nic("eth0"))}}, nil,
			`networkData.links.ethernets[0].macAddress.fromHostInterface: host host-a has no NIC "eth0"; its NICs are eno1, eno2`, false},
		{"NIC before inspection is retryable",
			infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{eth("a", nic("eno1"))}}, func(f *render.Facts) { f.NICs = nil },
			`networkData.links.ethernets[0].macAddress.fromHostInterface: host host-a has no inspected NICs yet`, true},
		{"bad MAC: the seed's placeholder",
			infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{eth("a", mac("XX:XX:XX:XX:XX:XX"))}}, nil,
			`networkData.links.ethernets[0].macAddress.string: "XX:XX:XX:XX:XX:XX" is not a MAC address; write six hex pairs separated by colons, like 52:54:00:12:34:56`, false},
		{"bad MAC: an eight-byte hardware address",
			infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{eth("a", mac("00:00:00:00:fe:80:00:00"))}}, nil,
			`networkData.links.ethernets[0].macAddress.string: "00:00:00:00:fe:80:00:00" is not a MAC address`, false},
		{"bad MAC in an annotation",
			infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{eth("a", &infrav1.NetworkLinkEthernetMac{FromAnnotation: &infrav1.NetworkLinkEthernetMacFromAnnotation{Object: "machine", Annotation: "note"}})}}, nil,
			`networkData.links.ethernets[0].macAddress.fromAnnotation: annotation "note" on the machine holds "from-machine", which is not a MAC address`, false},
		{"MAC from the Metal3Machine before provisioning",
			infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{eth("a", &infrav1.NetworkLinkEthernetMac{FromAnnotation: &infrav1.NetworkLinkEthernetMacFromAnnotation{Object: "metal3machine", Annotation: "mac"}})}},
			func(f *render.Facts) { *f = *preprovFacts() },
			`networkData.links.ethernets[0].macAddress.fromAnnotation: object metal3machine is not available before provisioning; use baremetalhost`, false},
		{"ethernet without a MAC",
			infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{eth("a", nil)}}, nil,
			`networkData.links.ethernets[0].macAddress: is missing; set string, fromHostInterface`, false},
		{"VLAN whose link does not exist lists the links",
			infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{eth("eno1", nic("eno1"))}, Vlans: []infrav1.NetworkDataLinkVlan{{ID: "v", VlanID: ptr.To[int32](3), VlanLink: "bond1"}}}, nil,
			`networkData.links.vlans[0].vlanLink: "bond1" is not a link of this template; links: eno1, v`, false},
		{"bond member that does not exist",
			infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{eth("eno1", nic("eno1"))}, Bonds: []infrav1.NetworkDataLinkBond{{ID: "bond0", BondMode: "balance-rr", BondLinks: []infrav1.LinkID{"eno1", "eno3"}}}}, nil,
			`networkData.links.bonds[0].bondLinks[1]: "eno3" is not a link of this template; links: bond0, eno1`, false},
		{"bond member that is not an ethernet",
			infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{eth("eno1", nic("eno1"))}, Vlans: []infrav1.NetworkDataLinkVlan{{ID: "v", VlanID: ptr.To[int32](3), VlanLink: "eno1"}},
				Bonds: []infrav1.NetworkDataLinkBond{{ID: "bond0", BondMode: "balance-rr", BondLinks: []infrav1.LinkID{"v"}}}}, nil,
			`networkData.links.bonds[0].bondLinks[0]: "v" is a vlan; a bond aggregates ethernets: eno1`, false},
		{"boot MAC missing",
			infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{eth("a", &infrav1.NetworkLinkEthernetMac{FromBootMAC: ptr.To(true)})}}, func(f *render.Facts) { f.BootMAC = "" },
			`networkData.links.ethernets[0].macAddress.fromBootMAC: host host-a has no spec.bootMACAddress; set it on the host`, false},
		{"bond mode from the seed (802.1ad) says what was meant",
			infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{eth("eno1", nic("eno1"))}, Bonds: []infrav1.NetworkDataLinkBond{{ID: "bond0", BondMode: "802.1ad", BondLinks: []infrav1.LinkID{"eno1"}}}}, nil,
			`networkData.links.bonds[0].bondMode: "802.1ad" is not a bond mode; use one of 802.3ad, balance-rr, active-backup, balance-xor, broadcast, balance-tlb, balance-alb (802.1ad is VLAN stacking; LACP is 802.3ad)`, false},
		{"bond parameter that would overwrite bond_mode",
			infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{eth("eno1", nic("eno1"))}, Bonds: []infrav1.NetworkDataLinkBond{{ID: "bond0", BondMode: "balance-rr", BondLinks: []infrav1.LinkID{"eno1"}, Parameters: []infrav1.NetworkDataLinkBondParam{param("mode", `"802.3ad"`)}}}}, nil,
			`networkData.links.bonds[0].parameters[0].name: "mode" would overwrite bond_mode, which has its own field; set that field instead`, false},
		{"bond parameter without a value",
			infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{eth("eno1", nic("eno1"))}, Bonds: []infrav1.NetworkDataLinkBond{{ID: "bond0", BondMode: "balance-rr", BondLinks: []infrav1.LinkID{"eno1"}, Parameters: []infrav1.NetworkDataLinkBondParam{{Name: "miimon"}}}}}, nil,
			`networkData.links.bonds[0].parameters[0].value: is missing`, false},
		{"duplicate link ids",
			infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{eth("x", nic("eno1"))}, Vlans: []infrav1.NetworkDataLinkVlan{{ID: "x", VlanID: ptr.To[int32](2), VlanLink: "x"}}}, nil,
			`networkData.links.vlans[0].id: "x" is also the id of networkData.links.ethernets[0]; give each link its own id`, false},
		{"links deriving their MACs from each other",
			infrav1.NetworkDataLinks{Vlans: []infrav1.NetworkDataLinkVlan{{ID: "a", VlanID: ptr.To[int32](2), VlanLink: "b"}, {ID: "b", VlanID: ptr.To[int32](3), VlanLink: "a"}}}, nil,
			`the links a -> b -> a take their MAC from each other; give one of them a macAddress`, false},
		{"VLAN id out of range",
			infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{eth("eno1", nic("eno1"))}, Vlans: []infrav1.NetworkDataLinkVlan{{ID: "v", VlanID: ptr.To[int32](5000), VlanLink: "eno1"}}}, nil,
			`networkData.links.vlans[0].vlanID: 5000 is not a VLAN id; give 0 to 4094`, false},
		{"unknown ethernet type",
			infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{{Type: "ethernet", ID: "a", MACAddress: nic("eno1")}}}, nil,
			`networkData.links.ethernets[0].type: "ethernet" is not a network_data.json link type; use phy for a physical NIC`, false},
		{"MTU out of range",
			infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{{Type: "phy", ID: "a", MTU: 65000, MACAddress: nic("eno1")}}}, nil,
			`networkData.links.ethernets[0].mtu: 65000 is outside 68..9000`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			f := hostFacts()
			if tt.facts != nil {
				tt.facts(f)
			}
			_, err := render.Networking(&infrav1.NetworkData{Links: &tt.given}, f)
			g.Expect(err).To(MatchError(ContainSubstring(tt.want)))
			g.Expect(render.IsRetryable(err)).To(Equal(tt.retryable))
		})
	}
}

func TestPreprovisioningMessagesNameItsFields(t *testing.T) {
	g := NewWithT(t)
	nd := &infrav1.NetworkData{Links: &infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{
		eth("a", &infrav1.NetworkLinkEthernetMac{FromAnnotation: &infrav1.NetworkLinkEthernetMacFromAnnotation{Object: "machine", Annotation: "mac"}}),
	}}}
	_, err := render.PreprovisioningNetworking(nd, preprovFacts())
	g.Expect(err).To(MatchError("preprovisioningNetworkData.links.ethernets[0].macAddress.fromAnnotation: object machine is not available before provisioning; use baremetalhost"))
	var e *render.Error
	g.Expect(errors.As(err, &e)).To(BeTrue())
	g.Expect(e.Reason).To(Equal(render.ReasonObjectUnavailable))
	g.Expect(e.Object).To(Equal("machine"))
}

// TestVLANIDFromClusterNetwork: a VLAN link with vlanIDFrom is tagged with the id the facts
// hold for its ClusterNetwork network, and without one the error names the field and the
// network, so a caller can say what it waits for.
func TestVLANIDFromClusterNetwork(t *testing.T) {
	g := NewWithT(t)
	links := infrav1.NetworkDataLinks{
		Ethernets: []infrav1.NetworkDataLinkEthernet{eth("eno1", nic("eno1"))},
		Vlans: []infrav1.NetworkDataLinkVlan{
			{ID: "fixed", VlanID: ptr.To[int32](7), VlanLink: "eno1"},
			{ID: "storage", VlanLink: "eno1", VlanIDFrom: &infrav1.VLANIDSource{ClusterNetwork: "prod", Network: "storage"}},
		},
	}
	refs := render.VLANRefs(&infrav1.NetworkData{Links: &links})
	g.Expect(refs).To(Equal([]render.VLANRef{{ClusterNetwork: "prod", Network: "storage"}}))

	f := hostFacts()
	_, err := linkJSON(t, links, f)
	var re *render.Error
	g.Expect(errors.As(err, &re)).To(BeTrue(), "%v", err)
	g.Expect(re.Reason).To(Equal(render.ReasonVLANUnresolved))
	g.Expect(re.VLAN).To(Equal(refs[0]))
	g.Expect(err.Error()).To(Equal("networkData.links.vlans[1].vlanIDFrom: no VLAN id is known for network storage of ClusterNetwork prod"))

	f.VLANs = map[render.VLANRef]int32{refs[0]: 120}
	out, err := linkJSON(t, links, f)
	g.Expect(err).NotTo(HaveOccurred())
	ids := map[string]any{}
	for _, l := range out {
		if l["type"] == "vlan" {
			ids[l["id"].(string)] = l["vlan_id"]
		}
	}
	g.Expect(ids).To(Equal(map[string]any{"fixed": float64(7), "storage": float64(120)}))
}
