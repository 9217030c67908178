package clusternetwork_test

import (
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/switchtest/vendortest"
)

// A host whose two cards are cabled to the two SONiC switches of a pair that declares its MCLAG
// (mlagPairs[].sonic) is bonded across them: it is ready, on each switch its port is in a
// port-channel that is a member of the pair's domain, each switch's domain set from its own and
// its peer's entries; leaving takes the port-channels out of the domain and deletes them, and
// the domain, the pair's, stays.
func TestControllersBondAHostAcrossASONiCMCLAGPair(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	startFabricWith(t, ns, nil)
	srvs := map[string]*vendortest.Server{}
	var switches []netv1.Switch
	var cards []netv1.HostNIC
	for _, name := range []string{"leaf1", "leaf2"} {
		srv := vendortest.Start(t, "sonic", "Ethernet0", "Ethernet4", "Ethernet60")
		srv.Config.AddSONiCPortChannel("PortChannel1", "Ethernet60") // the operator's peer link
		srvs[name] = srv
		create(t, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-login"},
			Type:       corev1.SecretTypeBasicAuth,
			StringData: map[string]string{corev1.BasicAuthUsernameKey: srv.User, corev1.BasicAuthPasswordKey: srv.Password},
		})
		switches = append(switches, netv1.Switch{Name: name, Address: srv.Host, Port: int32(srv.Port), NetworkOS: netv1.NetworkOSSONiC,
			HostKey: srv.HostKey, CredentialsRef: &netv1.SecretReference{Name: name + "-login"},
			Aggregates: &netv1.AggregateRange{First: 1000, Last: 9999}})
		cards = append(cards, netv1.HostNIC{NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: name, Port: intstr.FromString("Ethernet0")}},
			Capability: netv1.NICCapability{Speed: 1000}})
	}
	cn := clusterNetwork(ns, "cn-a", "1001-1001", "control")
	cn.Spec.Networks[0].LinkAggregation = 2
	cn.Spec.Networks[0].LAG = &netv1.LAG{Mode: netv1.LAGLACP}
	create(t, &netv1.NetworkDevice{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd1"},
		Spec: netv1.NetworkDeviceSpec{Switches: switches, MLAGPairs: []netv1.MLAGPair{{
			Name: "leaves", Switches: []string{"leaf1", "leaf2"}, Domain: 10,
			SONiC: []netv1.SONiCMCLAGSwitch{
				{Switch: "leaf1", SourceAddress: "192.168.255.1", PeerLink: "PortChannel1"},
				{Switch: "leaf2", SourceAddress: "192.168.255.2", PeerLink: "PortChannel1"},
			},
		}}},
	}, &netv1.NIC{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nic-h1"},
		Spec:       netv1.NICSpec{Node: "h1", NetworkDeviceRef: "nd1", NICs: cards},
	}, cn)
	g.Eventually(func(g Gomega) {
		g.Expect(getCN(g, ns, "cn-a").Status.Available).To(HaveKey("h1"))
	}, timeout).Should(Succeed())
	selectHost(t, ns, "h1", "cn-a")
	g.Eventually(func(g Gomega) {
		st := state(g, ns, "cn-a", "h1")
		g.Expect(st.State).To(Equal(netv1.HostReady), "host h1: %s", st.Message)
	}, timeout).Should(Succeed())

	peerOf := map[string]string{"leaf1": "192.168.255.2", "leaf2": "192.168.255.1"}
	self := map[string]string{"leaf1": "192.168.255.1", "leaf2": "192.168.255.2"}
	for name, srv := range srvs {
		d, ok := srv.Config.SONiCMCLAG()
		g.Expect(ok).To(BeTrue(), "switch %s has no MCLAG domain", name)
		g.Expect(d).To(Equal(vendortest.SONiCMCLAGDomain{ID: 10, SourceIP: self[name], PeerIP: peerOf[name], PeerLink: "PortChannel1"}), "switch %s", name)
		p, _ := srv.Config.Port("Ethernet0")
		g.Expect(p.Channel).To(BeNumerically(">=", 1000), "switch %s: Ethernet0 is in no port-channel of the range", name)
		pc, _ := srv.Config.Port("PortChannel" + strconv.Itoa(p.Channel))
		g.Expect(pc.MLAG).To(Equal(10), "switch %s: the bond's port-channel is not in MCLAG domain 10", name)
	}

	selectHost(t, ns, "h1", "")
	g.Eventually(func(g Gomega) {
		for name, srv := range srvs {
			p, _ := srv.Config.Port("Ethernet0")
			g.Expect(p.ChannelMode).To(BeEmpty(), "switch %s: Ethernet0 is still in a port-channel", name)
			g.Expect(p.Access).To(Equal(1))
			for _, n := range srv.Config.PortNames() {
				q, _ := srv.Config.Port(n)
				g.Expect(q.MLAG).To(BeZero(), "switch %s: %s is still in the MCLAG domain", name, n)
			}
		}
	}, timeout).Should(Succeed())
	for name, srv := range srvs {
		_, ok := srv.Config.SONiCMCLAG()
		g.Expect(ok).To(BeTrue(), "switch %s: the pair's domain was removed", name)
	}
}
