package render_test

import (
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/pkg/render"
)

func defaultRoute4(gw infrav1.NetworkGatewayv4) infrav1.NetworkDataRoutev4 {
	return infrav1.NetworkDataRoutev4{Network: "0.0.0.0", Gateway: gw}
}

// incluster references a Cluster API in-cluster IPAM pool.
func incluster(name string) *infrav1.IPPoolReference {
	return &infrav1.IPPoolReference{APIGroup: "ipam.cluster.x-k8s.io", Kind: "InClusterIPPool", Name: name}
}

func TestNetworks(t *testing.T) {
	tests := []struct {
		name  string
		given infrav1.NetworkDataNetworks
		want  string // the networks, as JSON
	}{
		{"ipv4 from a pool by name, default route from the pool's gateway",
			infrav1.NetworkDataNetworks{IPv4: []infrav1.NetworkDataIPv4{{ID: "n", Link: "eno1", IPAddressFromIPPool: "pool4",
				Routes: []infrav1.NetworkDataRoutev4{defaultRoute4(infrav1.NetworkGatewayv4{FromIPPool: ptr.To("pool4")})}}}},
			`[{"id":"n","ip_address":"192.168.10.5","link":"eno1","netmask":"255.255.255.0","network_id":"n",
			   "routes":[{"gateway":"192.168.10.1","netmask":"0.0.0.0","network":"0.0.0.0","services":[]}],"type":"ipv4"}]`},
		{"ipv4 from a typed pool reference; route services: dns then the pool's",
			infrav1.NetworkDataNetworks{IPv4: []infrav1.NetworkDataIPv4{{ID: "n", Link: "eno1",
				FromPoolRef: &infrav1.IPPoolReference{APIGroup: "ipam.cluster.x-k8s.io", Kind: "InClusterIPPool", Name: "incluster"},
				Routes: []infrav1.NetworkDataRoutev4{{Network: "172.16.0.0", Prefix: ptr.To[int32](12),
					Gateway:  infrav1.NetworkGatewayv4{FromPoolRef: &infrav1.IPPoolReference{APIGroup: "ipam.cluster.x-k8s.io", Kind: "InClusterIPPool", Name: "incluster"}},
					Services: &infrav1.NetworkDataServicev4{DNS: []infrav1.IPv4Address{"1.1.1.1"}, DNSFromIPPool: ptr.To("pool4")}}}}}},
			`[{"id":"n","ip_address":"10.1.0.9","link":"eno1","netmask":"255.255.0.0","network_id":"n",
			   "routes":[{"gateway":"10.1.0.1","netmask":"255.240.0.0","network":"172.16.0.0","services":[
			     {"address":"1.1.1.1","type":"dns"},{"address":"192.168.10.2","type":"dns"},{"address":"192.168.10.3","type":"dns"}]}],"type":"ipv4"}]`},
		{"ipv4 from the pool an annotation names (the annotation wins over the name)",
			infrav1.NetworkDataNetworks{IPv4: []infrav1.NetworkDataIPv4{{ID: "n", Link: "eno1", IPAddressFromIPPool: "pool4",
				FromPoolAnnotation: &infrav1.FromPoolAnnotation{Object: "metal3machine", Annotation: "pool"}}}},
			`[{"id":"n","ip_address":"10.9.0.9","link":"eno1","netmask":"255.0.0.0","network_id":"n","routes":[],"type":"ipv4"}]`},
		// CAPM3 serialises ipAddressFromIPPool: "" (no omitempty on its IPv6 type) beside
		// fromPoolRef; an empty name must not hide the reference.
		{"an empty ipAddressFromIPPool or gateway fromIPPool beside fromPoolRef is unset",
			infrav1.NetworkDataNetworks{
				IPv4: []infrav1.NetworkDataIPv4{{ID: "n", Link: "eno1", IPAddressFromIPPool: "", FromPoolRef: incluster("incluster"),
					Routes: []infrav1.NetworkDataRoutev4{defaultRoute4(infrav1.NetworkGatewayv4{FromIPPool: ptr.To(""), FromPoolRef: incluster("incluster")})}}},
				IPv6: []infrav1.NetworkDataIPv6{{ID: "n6", Link: "eno2", IPAddressFromIPPool: "", FromPoolRef: incluster("incluster6"),
					Routes: []infrav1.NetworkDataRoutev6{{Network: "::", Gateway: infrav1.NetworkGatewayv6{FromIPPool: ptr.To(""), FromPoolRef: incluster("incluster6")}}}}},
			},
			`[{"id":"n","ip_address":"10.1.0.9","link":"eno1","netmask":"255.255.0.0","network_id":"n",
			   "routes":[{"gateway":"10.1.0.1","netmask":"0.0.0.0","network":"0.0.0.0","services":[]}],"type":"ipv4"},
			  {"id":"n6","ip_address":"2001:db8:6::9","link":"eno2","netmask":"ffff:ffff:ffff:ffff::","network_id":"n6",
			   "routes":[{"gateway":"2001:db8:6::1","netmask":"::","network":"::","services":[]}],"type":"ipv6"}]`},
		{"seed-era ipv4 from the index, prefix from netmask",
			infrav1.NetworkDataNetworks{IPv4: []infrav1.NetworkDataIPv4{{ID: "n", Link: "eno1", Netmask: ptr.To[int32](26),
				IPAddress: &infrav1.NetworkDataIPAddress{Start: ptr.To[infrav1.IPAddress]("10.0.0.62"), End: ptr.To[infrav1.IPAddress]("10.0.0.70"), Step: 2}}}},
			`[{"id":"n","ip_address":"10.0.0.66","link":"eno1","netmask":"255.255.255.192","network_id":"n","routes":[],"type":"ipv4"}]`},
		{"seed-era ipv6 from a subnet, prefix from the subnet",
			infrav1.NetworkDataNetworks{IPv6: []infrav1.NetworkDataIPv6{{ID: "n6", Link: "eno2",
				IPAddress: &infrav1.NetworkDataIPAddress{Subnet: ptr.To[infrav1.IPSubnet]("2001:db8:1::/56"), Step: 256}}}},
			`[{"id":"n6","ip_address":"2001:db8:1::201","link":"eno2","netmask":"ffff:ffff:ffff:ff00::","network_id":"n6","routes":[],"type":"ipv6"}]`},
		{"ipv6 from a pool with a default route",
			infrav1.NetworkDataNetworks{IPv6: []infrav1.NetworkDataIPv6{{ID: "n6", Link: "eno1", IPAddressFromIPPool: "pool6",
				Routes: []infrav1.NetworkDataRoutev6{{Network: "::", Gateway: infrav1.NetworkGatewayv6{String: ptr.To[infrav1.IPv6Address]("fe80::1")}}}}}},
			`[{"id":"n6","ip_address":"2001:db8::5","link":"eno1","netmask":"ffff:ffff:ffff:ffff::","network_id":"n6",
			   "routes":[{"gateway":"fe80::1","netmask":"::","network":"::","services":[]}],"type":"ipv6"}]`},
		{"dynamic networks, in the order ipv4, ipv6, ipv4_dhcp, ipv6_dhcp, ipv6_slaac whatever the template's",
			infrav1.NetworkDataNetworks{
				IPv6SLAAC: []infrav1.NetworkDataIPv6DHCP{{ID: "s", Link: "eno2"}},
				IPv6DHCP:  []infrav1.NetworkDataIPv6DHCP{{ID: "d6", Link: "eno2"}},
				IPv4DHCP:  []infrav1.NetworkDataIPv4DHCP{{ID: "d4", Link: "eno1", Routes: []infrav1.NetworkDataRoutev4{{Network: "10.0.0.0", Prefix: ptr.To[int32](8), Gateway: infrav1.NetworkGatewayv4{String: ptr.To[infrav1.IPv4Address]("192.168.10.254")}}}}},
				IPv6:      []infrav1.NetworkDataIPv6{{ID: "st6", Link: "eno1", IPAddressFromIPPool: "pool6"}},
				IPv4:      []infrav1.NetworkDataIPv4{{ID: "st4", Link: "eno1", IPAddressFromIPPool: "pool4"}},
			},
			`[{"id":"st4","ip_address":"192.168.10.5","link":"eno1","netmask":"255.255.255.0","network_id":"st4","routes":[],"type":"ipv4"},
			  {"id":"st6","ip_address":"2001:db8::5","link":"eno1","netmask":"ffff:ffff:ffff:ffff::","network_id":"st6","routes":[],"type":"ipv6"},
			  {"id":"d4","link":"eno1","network_id":"d4","routes":[{"gateway":"192.168.10.254","netmask":"255.0.0.0","network":"10.0.0.0","services":[]}],"type":"ipv4_dhcp"},
			  {"id":"d6","link":"eno2","network_id":"d6","routes":[],"type":"ipv6_dhcp"},
			  {"id":"s","link":"eno2","network_id":"s","routes":[],"type":"ipv6_slaac"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			nd, err := render.Networking(&infrav1.NetworkData{Links: ptr.To(twoNICs()), Networks: &tt.given}, hostFacts())
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(validate(t, nd)).To(Succeed(), "the Ironic schema")
			got, err := json.Marshal(nd.Networks)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(MatchJSON(tt.want))
		})
	}
}

func TestServices(t *testing.T) {
	g := NewWithT(t)
	nd, err := render.Networking(&infrav1.NetworkData{Links: ptr.To(twoNICs()), Services: &infrav1.NetworkDataService{
		DNS: []infrav1.IPAddress{"9.9.9.9", "2620:fe::fe"}, DNSFromIPPool: ptr.To("pool6"),
	}}, hostFacts())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(nd.Services).To(Equal([]render.Service{
		{Type: "dns", Address: "9.9.9.9"}, {Type: "dns", Address: "2620:fe::fe"}, {Type: "dns", Address: "2001:db8::53"},
	}), "dns first, then the pool's")
	g.Expect(validate(t, nd)).To(Succeed())
}

func TestEmptyNetworkDataIsValid(t *testing.T) {
	g := NewWithT(t)
	nd, err := render.Networking(nil, preprovFacts())
	g.Expect(err).NotTo(HaveOccurred())
	b, err := nd.JSON()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(b).To(MatchJSON(`{"links":[],"networks":[],"services":[]}`))
	g.Expect(validate(t, nd)).To(Succeed())
}

func TestNetworkErrors(t *testing.T) {
	tests := []struct {
		name  string
		given infrav1.NetworkDataNetworks
		facts func(*render.Facts)
		want  string
		// waitingFor is the pool a controller should wait for, when the error is that.
		waitingFor string
	}{
		{"address past the end of its range",
			infrav1.NetworkDataNetworks{IPv4: []infrav1.NetworkDataIPv4{{ID: "n", Link: "eno1",
				IPAddress: &infrav1.NetworkDataIPAddress{Start: ptr.To[infrav1.IPAddress]("192.168.0.10"), End: ptr.To[infrav1.IPAddress]("192.168.0.11"), Subnet: ptr.To[infrav1.IPSubnet]("192.168.0.0/24")}}}},
			nil, `networkData.networks.ipv4[0].ipAddress.end: index 2 gives 192.168.0.12, past end 192.168.0.11: raise end, or take addresses from an IP pool (ipAddressFromIPPool)`, ""},
		{"address leaving its subnet",
			infrav1.NetworkDataNetworks{IPv4: []infrav1.NetworkDataIPv4{{ID: "n", Link: "eno1",
				IPAddress: &infrav1.NetworkDataIPAddress{Start: ptr.To[infrav1.IPAddress]("192.168.0.254"), Subnet: ptr.To[infrav1.IPSubnet]("192.168.0.0/24")}}}},
			nil, `networkData.networks.ipv4[0].ipAddress.subnet: index 2 gives 192.168.1.0, outside subnet 192.168.0.0/24`, ""},
		{"seed-era address without a prefix",
			infrav1.NetworkDataNetworks{IPv4: []infrav1.NetworkDataIPv4{{ID: "n", Link: "eno1", IPAddress: &infrav1.NetworkDataIPAddress{Start: ptr.To[infrav1.IPAddress]("192.168.0.10")}}}},
			nil, `networkData.networks.ipv4[0].netmask: is needed when ipAddress has no subnet; give the prefix length, such as 24`, ""},
		{"an IPv6 range under ipv4",
			infrav1.NetworkDataNetworks{IPv4: []infrav1.NetworkDataIPv4{{ID: "n", Link: "eno1", IPAddress: &infrav1.NetworkDataIPAddress{Subnet: ptr.To[infrav1.IPSubnet]("2001:db8::/64")}}}},
			nil, `networkData.networks.ipv4[0].ipAddress: gives 2001:db8::3, not an IPv4 address; move it to networks.ipv6`, ""},
		{"pool address not allocated yet",
			infrav1.NetworkDataNetworks{IPv4: []infrav1.NetworkDataIPv4{{ID: "n", Link: "eno1", IPAddressFromIPPool: "pending"}}},
			nil, `networkData.networks.ipv4[0].ipAddressFromIPPool: waiting for an address from pool pending`, "pending"},
		{"gateway pool not allocated yet",
			infrav1.NetworkDataNetworks{IPv4DHCP: []infrav1.NetworkDataIPv4DHCP{{ID: "n", Link: "eno1", Routes: []infrav1.NetworkDataRoutev4{defaultRoute4(infrav1.NetworkGatewayv4{FromIPPool: ptr.To("gw-pool")})}}}},
			nil, `networkData.networks.ipv4DHCP[0].routes[0].gateway.fromIPPool: waiting for an address from pool gw-pool`, "gw-pool"},
		{"pool annotation on the Metal3Machine before provisioning",
			infrav1.NetworkDataNetworks{IPv4: []infrav1.NetworkDataIPv4{{ID: "n", Link: "eno1", FromPoolAnnotation: &infrav1.FromPoolAnnotation{Object: "metal3machine", Annotation: "pool"}}}},
			func(f *render.Facts) { f.Metal3Machine = nil }, `networkData.networks.ipv4[0].fromPoolAnnotation: object metal3machine is not available before provisioning; use baremetalhost`, ""},
		{"pool annotation missing",
			infrav1.NetworkDataNetworks{IPv4: []infrav1.NetworkDataIPv4{{ID: "n", Link: "eno1", FromPoolAnnotation: &infrav1.FromPoolAnnotation{Object: "baremetalhost", Annotation: "pool"}}}},
			nil, `networkData.networks.ipv4[0].fromPoolAnnotation: annotation "pool" on the baremetalhost is missing or empty; set it to the name of an IPPool`, ""},
		{"an IPv6 pool under ipv4",
			infrav1.NetworkDataNetworks{IPv4: []infrav1.NetworkDataIPv4{{ID: "n", Link: "eno1", IPAddressFromIPPool: "pool6"}}},
			nil, `networkData.networks.ipv4[0].ipAddressFromIPPool: pool pool6 gave address 2001:db8::5, which is not an IPv4 address; use a pool of IPv4 addresses here`, ""},
		{"network on a link that does not exist",
			infrav1.NetworkDataNetworks{IPv6SLAAC: []infrav1.NetworkDataIPv6DHCP{{ID: "n", Link: "bond9"}}},
			nil, `networkData.networks.ipv6SLAAC[0].link: "bond9" is not a link of this template; links: eno1, eno2`, ""},
		{"static network without an address source",
			infrav1.NetworkDataNetworks{IPv6: []infrav1.NetworkDataIPv6{{ID: "n", Link: "eno1"}}},
			nil, `networkData.networks.ipv6[0]: has no address; set ipAddressFromIPPool, fromPoolRef, fromPoolAnnotation or ipAddress (or use ipv6DHCP)`, ""},
		{"host route /32: the schema Ironic enforces has no 255.255.255.255 netmask",
			infrav1.NetworkDataNetworks{IPv4DHCP: []infrav1.NetworkDataIPv4DHCP{{ID: "n", Link: "eno1", Routes: []infrav1.NetworkDataRoutev4{{Network: "10.0.0.1", Prefix: ptr.To[int32](32), Gateway: infrav1.NetworkGatewayv4{String: ptr.To[infrav1.IPv4Address]("192.168.10.1")}}}}}},
			nil, `networkData.networks.ipv4DHCP[0].routes[0].prefix: prefix 32 gives netmask 255.255.255.255, which the network_data.json schema Ironic enforces does not allow`, ""},
		{"route gateway of the wrong family",
			infrav1.NetworkDataNetworks{IPv4DHCP: []infrav1.NetworkDataIPv4DHCP{{ID: "n", Link: "eno1", Routes: []infrav1.NetworkDataRoutev4{defaultRoute4(infrav1.NetworkGatewayv4{String: ptr.To[infrav1.IPv4Address]("2001:db8::1")})}}}},
			nil, `networkData.networks.ipv4DHCP[0].routes[0].gateway.string: 2001:db8::1 is not an IPv4 address; write it like 192.168.0.1`, ""},
		{"route DNS from a pool of the other family",
			infrav1.NetworkDataNetworks{IPv4DHCP: []infrav1.NetworkDataIPv4DHCP{{ID: "n", Link: "eno1", Routes: []infrav1.NetworkDataRoutev4{{Network: "0.0.0.0", Gateway: infrav1.NetworkGatewayv4{String: ptr.To[infrav1.IPv4Address]("192.168.10.1")}, Services: &infrav1.NetworkDataServicev4{DNSFromIPPool: ptr.To("pool6")}}}}}},
			nil, `networkData.networks.ipv4DHCP[0].routes[0].services.dnsFromIPPool: pool pool6 gave DNS server 2001:db8::53, which is not an IPv4 address`, ""},
		{"gateway from a pool without one",
			infrav1.NetworkDataNetworks{IPv4DHCP: []infrav1.NetworkDataIPv4DHCP{{ID: "n", Link: "eno1", Routes: []infrav1.NetworkDataRoutev4{defaultRoute4(infrav1.NetworkGatewayv4{FromIPPool: ptr.To("nogw")})}}}},
			func(f *render.Facts) {
				f.Pools[render.NewPoolRef("", "", "nogw")] = render.PoolAddress{Address: "10.0.0.2", Prefix: 24}
			},
			`networkData.networks.ipv4DHCP[0].routes[0].gateway.fromIPPool: pool nogw has no gateway for this host's address`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			f := hostFacts()
			if tt.facts != nil {
				tt.facts(f)
			}
			_, err := render.Networking(&infrav1.NetworkData{Links: ptr.To(twoNICs()), Networks: &tt.given}, f)
			g.Expect(err).To(MatchError(ContainSubstring(tt.want)))
			pool, waiting := render.IsWaitingForPool(err)
			g.Expect(waiting).To(Equal(tt.waitingFor != ""))
			g.Expect(pool.Name).To(Equal(tt.waitingFor))
			g.Expect(render.IsRetryable(err)).To(Equal(waiting))
		})
	}
}

func TestPoolsListsEveryPoolOnce(t *testing.T) {
	g := NewWithT(t)
	md := &infrav1.MetaData{
		IPAddressesFromPool: []infrav1.FromPool{{Key: "a", Name: "pool4"}},
		GatewaysFromPool:    []infrav1.FromPool{{Key: "b", Name: "incluster", APIGroup: "ipam.cluster.x-k8s.io", Kind: "InClusterIPPool"}},
	}
	nd := &infrav1.NetworkData{
		Links: ptr.To(twoNICs()),
		Networks: &infrav1.NetworkDataNetworks{
			IPv4: []infrav1.NetworkDataIPv4{
				{ID: "a", Link: "eno1", IPAddressFromIPPool: "pool4", Routes: []infrav1.NetworkDataRoutev4{defaultRoute4(infrav1.NetworkGatewayv4{FromIPPool: ptr.To("gw")})}},
				{ID: "b", Link: "eno2", FromPoolAnnotation: &infrav1.FromPoolAnnotation{Object: "metal3machine", Annotation: "pool"}},
			},
			IPv6: []infrav1.NetworkDataIPv6{{ID: "c", Link: "eno1", IPAddressFromIPPool: "pool6"}},
		},
		Services: &infrav1.NetworkDataService{DNSFromIPPool: ptr.To("dns")},
	}
	refs, err := render.Pools(md, nd, hostFacts())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(refs).To(Equal([]render.PoolRef{
		render.NewPoolRef("", "", "pool4"),
		render.NewPoolRef("ipam.cluster.x-k8s.io", "InClusterIPPool", "incluster"),
		render.NewPoolRef("", "", "gw"),
		render.NewPoolRef("", "", "annotated-pool"),
		render.NewPoolRef("", "", "pool6"),
		render.NewPoolRef("", "", "dns"),
	}))
}

// An empty pool name beside fromPoolRef names no pool: a controller must not wait for (or
// claim from) an IPPool called "".
func TestPoolsIgnoresEmptyPoolNames(t *testing.T) {
	g := NewWithT(t)
	nd := &infrav1.NetworkData{
		Links: ptr.To(twoNICs()),
		Networks: &infrav1.NetworkDataNetworks{
			IPv4: []infrav1.NetworkDataIPv4{{ID: "a", Link: "eno1", IPAddressFromIPPool: "", FromPoolRef: incluster("incluster"),
				Routes: []infrav1.NetworkDataRoutev4{defaultRoute4(infrav1.NetworkGatewayv4{FromIPPool: ptr.To(""), FromPoolRef: incluster("incluster")})}}},
			IPv6: []infrav1.NetworkDataIPv6{{ID: "b", Link: "eno2", IPAddressFromIPPool: "", FromPoolRef: incluster("incluster6")}},
		},
		Services: &infrav1.NetworkDataService{DNSFromIPPool: ptr.To("")},
	}
	refs, err := render.Pools(nil, nd, hostFacts())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(refs).To(Equal([]render.PoolRef{
		render.NewPoolRef("ipam.cluster.x-k8s.io", "InClusterIPPool", "incluster"),
		render.NewPoolRef("ipam.cluster.x-k8s.io", "InClusterIPPool", "incluster6"),
	}))
}
