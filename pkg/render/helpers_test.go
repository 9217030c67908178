package render_test

import (
	"k8s.io/utils/ptr"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/pkg/render"
)

// hostFacts is a provisioned host with two NICs, as the table tests start from.
func hostFacts() *render.Facts {
	return &render.Facts{
		Index:     2,
		Namespace: "ns1",
		Machine: &render.Object{
			Name: "machine-a", Namespace: "ns1",
			Labels:      map[string]string{"tier": "gold"},
			Annotations: map[string]string{"note": "from-machine", "mac": "aa:bb:cc:dd:ee:01"},
		},
		Metal3Machine: &render.Object{
			Name: "m3m-a", Namespace: "ns1",
			Labels:      map[string]string{"tier": "silver"},
			Annotations: map[string]string{"note": "from-m3m", "pool": "annotated-pool"},
		},
		Host: render.Object{
			Name: "host-a", Namespace: "ns1",
			Labels:      map[string]string{"tier": "bronze"},
			Annotations: map[string]string{"note": "from-host"},
		},
		NICs:    []render.NIC{{Name: "eno1", MAC: "52:54:00:00:00:01"}, {Name: "eno2", MAC: "52:54:00:00:00:02"}},
		BootMAC: "52:54:00:00:00:01",
		Pools: map[render.PoolRef]render.PoolAddress{
			render.NewPoolRef("", "", "pool4"):                                          {Address: "192.168.10.5", Prefix: 24, Gateway: "192.168.10.1", DNSServers: []string{"192.168.10.2", "192.168.10.3"}},
			render.NewPoolRef("", "", "pool6"):                                          {Address: "2001:db8::5", Prefix: 64, Gateway: "2001:db8::1", DNSServers: []string{"2001:db8::53"}},
			render.NewPoolRef("ipam.cluster.x-k8s.io", "InClusterIPPool", "incluster"):  {Address: "10.1.0.9", Prefix: 16, Gateway: "10.1.0.1"},
			render.NewPoolRef("ipam.cluster.x-k8s.io", "InClusterIPPool", "incluster6"): {Address: "2001:db8:6::9", Prefix: 64, Gateway: "2001:db8:6::1"},
			render.NewPoolRef("", "", "annotated-pool"):                                 {Address: "10.9.0.9", Prefix: 8, Gateway: "10.9.0.1"},
		},
	}
}

// preprovFacts is a host just registered: no Machine, no Metal3Machine, no inspected NICs.
func preprovFacts() *render.Facts {
	f := hostFacts()
	f.Machine, f.Metal3Machine, f.NICs = nil, nil, nil
	return f
}

func mac(s string) *infrav1.NetworkLinkEthernetMac {
	return &infrav1.NetworkLinkEthernetMac{String: ptr.To(infrav1.MACAddress(s))}
}

func nic(name string) *infrav1.NetworkLinkEthernetMac {
	return &infrav1.NetworkLinkEthernetMac{FromHostInterface: ptr.To(name)}
}

func eth(id string, m *infrav1.NetworkLinkEthernetMac) infrav1.NetworkDataLinkEthernet {
	return infrav1.NetworkDataLinkEthernet{Type: "phy", ID: infrav1.LinkID(id), MACAddress: m}
}

// twoNICs is the links section most network tests put their networks on.
func twoNICs() infrav1.NetworkDataLinks {
	return infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{eth("eno1", nic("eno1")), eth("eno2", nic("eno2"))}}
}
