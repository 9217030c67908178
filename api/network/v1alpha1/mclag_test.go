package v1alpha1

import "testing"

// SONiCMCLAGOf gives a switch its side of its pair's declared SONiC MCLAG domain and its peer's;
// nothing for a switch in no pair or in a pair that declares none.
func TestSONiCMCLAGOf(t *testing.T) {
	nd := &NetworkDevice{Spec: NetworkDeviceSpec{MLAGPairs: []MLAGPair{
		{Name: "tors", Switches: []string{"tor1", "tor2"}, Domain: 5},
		{Name: "leaves", Switches: []string{"leaf1", "leaf2"}, Domain: 10, SONiC: []SONiCMCLAGSwitch{
			{Switch: "leaf2", SourceAddress: "192.168.255.2", PeerLink: "Ethernet60"},
			{Switch: "leaf1", SourceAddress: "192.168.255.1", PeerLink: "PortChannel1"},
		}},
	}}}
	pair, self, peer := nd.SONiCMCLAGOf("leaf1")
	if pair == nil || pair.Name != "leaves" || self == nil || *self != nd.Spec.MLAGPairs[1].SONiC[1] || peer == nil || *peer != nd.Spec.MLAGPairs[1].SONiC[0] {
		t.Fatalf("leaf1: pair %v, self %v, peer %v; want leaves, leaf1's entry, leaf2's entry", pair, self, peer)
	}
	for _, sw := range []string{"tor1", "spine1"} {
		if pair, self, peer := nd.SONiCMCLAGOf(sw); pair != nil || self != nil || peer != nil {
			t.Errorf("%s: pair %v, self %v, peer %v; want none", sw, pair, self, peer)
		}
	}
}
