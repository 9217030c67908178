package clusternetwork_test

import (
	"context"
	"net"
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
)

// Two hosts whose inspection saw the switch over LLDP (its management MAC and their ports) get
// NIC objects without anyone writing them, join a ClusterNetwork on a real Open vSwitch and
// reach each other; a third host stays apart.
func TestHostsFoundByLLDPJoinAndPing(t *testing.T) {
	ovstest.Require(t, "ovs-vswitchd", "ip", "ping")
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	f := ovstest.NewFabric(t)
	host, port, err := net.SplitHostPort(f.Switch.TCPAddr)
	g.Expect(err).NotTo(HaveOccurred())
	p, _ := strconv.Atoi(port)
	startFabricWith(t, ns, nil)

	const switchMAC = "02:00:5e:00:53:01"
	create(t, &netv1.NetworkDevice{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd1"},
		Spec: netv1.NetworkDeviceSpec{Switches: []netv1.Switch{{
			Name: "leaf1", Address: host, Port: int32(p), NetworkOS: netv1.NetworkOSOpenvSwitch, Bridge: f.Bridge, MACAddress: switchMAC,
		}}},
	})
	for _, h := range []*ovstest.Host{f.H1, f.H2, f.H3} {
		bmh := &bmov1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: h.Name}, Spec: bmov1.BareMetalHostSpec{Online: true}}
		create(t, bmh)
		base := bmh.DeepCopy()
		bmh.Status.HardwareDetails = &bmov1.HardwareDetails{NIC: []bmov1.NIC{{
			Name: "eth0", MAC: "aa:00:00:00:00:0" + h.Name[1:], SpeedGbps: 1,
			LLDP: &bmov1.LLDP{SwitchID: switchMAC, PortID: h.Port, SwitchSystemName: "leaf1.lab"},
		}}}
		g.Expect(env.Client.Status().Patch(ctx, bmh, client.MergeFrom(base))).To(Succeed())
	}
	create(t, clusterNetwork(ns, "cn-a", "1001-1001", "control"))
	g.Eventually(func(g Gomega) {
		g.Expect(getCN(g, ns, "cn-a").Status.Available).To(HaveKey("h1"))
		g.Expect(getCN(g, ns, "cn-a").Status.Available).To(HaveKey("h2"))
	}, timeout).Should(Succeed(), "the hosts' NIC objects were made from LLDP")

	for _, h := range []string{"h1", "h2"} { // what a Metal3Machine does for each
		nic := &netv1.NIC{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: h}, nic)).To(Succeed())
		base := nic.DeepCopy()
		nic.Labels[netv1.SelectedForLabel] = "cn-a"
		g.Expect(env.Client.Patch(ctx, nic, client.MergeFrom(base))).To(Succeed())
	}
	for _, h := range []string{"h1", "h2"} {
		g.Eventually(func(g Gomega) {
			g.Expect(state(g, ns, "cn-a", h).State).To(Equal(netv1.HostReady))
		}, timeout).Should(Succeed())
	}
	g.Expect(f.Switch.Ports(t)[f.H1.Port].Tag).To(Equal(1001))
	g.Expect(ovstest.Reaches(t, f.H1, f.H2.Addr, 5)).To(BeTrue(), "h1 reaches h2 in the same cluster")
	g.Expect(ovstest.Reaches(t, f.H1, f.H3.Addr, 2)).To(BeFalse(), "h1 does not reach h3, which was not selected")
}
