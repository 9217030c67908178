package clusternetwork_test

import (
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/switchtest/gnmitest"
	"github.com/metalwire/metalwire/internal/switchtest/vendortest"
)

// vendorSwitches are the vendor OSes with three ports of theirs; join is a line the switch sees
// when the third host joins cn-b (access VLAN 1002), leave one it sees when the second host
// leaves (back to VLAN 1); refused is what the switch answers a refused line with.
var vendorSwitches = []struct {
	os          netv1.NetworkOS
	ports       [3]string
	join, leave string
	refused     string
}{
	{netv1.NetworkOSEOS, [3]string{"Ethernet1", "Ethernet2", "Ethernet3"},
		"switchport access vlan 1002", "interface Ethernet2", "% Invalid input"},
	{netv1.NetworkOSNXOS, [3]string{"Ethernet1/1", "Ethernet1/2", "Ethernet1/3"},
		"switchport access vlan 1002", "interface Ethernet1/2", "% Invalid command"},
	{netv1.NetworkOSJunos, [3]string{"ge-0/0/0", "ge-0/0/1", "ge-0/0/2"},
		"commit check", "set interfaces ge-0/0/1 unit 0 family ethernet-switching vlan members 1", "error: configuration check-out failed"},
	{netv1.NetworkOSSONiC, [3]string{"Ethernet0", "Ethernet4", "Ethernet8"},
		"sudo config vlan member add -u 1002 Ethernet8", "sudo config vlan member add -u 1 Ethernet4", "Ethernet8 is a router interface"},
	{netv1.NetworkOSDellOS10, [3]string{"ethernet1/1/1", "ethernet1/1/2", "ethernet1/1/3"},
		"switchport access vlan 1002", "interface ethernet1/1/2", "% Error: Unrecognized command"},
	{netv1.NetworkOSCumulus, [3]string{"swp1", "swp2", "swp3"},
		"nv set interface swp3 bridge domain br_default access 1002", "nv set interface swp2 bridge domain br_default access 1", "Error: Invalid config"},
}

// The image's manager with the image's drivers drives each vendor OS, emulated over SSH: hosts
// join and their ports end in their cluster's VLAN; a reconcile with nothing changed sends
// nothing; a line the switch refuses puts the switch's own message in the host's state, and the
// retry ends ready; a connection dropped half-way through a host's leaving is retried and the
// port ends back in the idle VLAN.
func TestControllersDriveVendorSwitches(t *testing.T) {
	for _, vs := range vendorSwitches {
		t.Run(string(vs.os), func(t *testing.T) {
			g := NewWithT(t)
			ns := env.NewNamespace(t)
			srv := vendortest.Start(t, string(vs.os), vs.ports[0], vs.ports[1], vs.ports[2])
			startFabricWith(t, ns, nil)

			create(t, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "leaf1-login"},
				Type:       corev1.SecretTypeBasicAuth,
				StringData: map[string]string{corev1.BasicAuthUsernameKey: srv.User, corev1.BasicAuthPasswordKey: srv.Password},
			}, &netv1.NetworkDevice{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd1"},
				Spec: netv1.NetworkDeviceSpec{Switches: []netv1.Switch{{
					Name: "leaf1", Address: srv.Host, Port: int32(srv.Port), NetworkOS: vs.os,
					HostKey: srv.HostKey, CredentialsRef: &netv1.SecretReference{Name: "leaf1-login"},
				}}},
			})
			hosts := []string{"h1", "h2", "h3"}
			for i, h := range hosts {
				create(t, &netv1.NIC{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nic-" + h},
					Spec: netv1.NICSpec{Node: h, NetworkDeviceRef: "nd1", NICs: []netv1.HostNIC{{
						NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: "leaf1", Port: intstr.FromString(vs.ports[i])}},
						Capability:    netv1.NICCapability{Speed: 1000},
					}}},
				})
			}
			create(t, clusterNetwork(ns, "cn-a", "1001-1001", "control"), clusterNetwork(ns, "cn-b", "1002-1002", "data"))
			g.Eventually(func(g Gomega) {
				g.Expect(getCN(g, ns, "cn-a").Status.Available).To(HaveKey("h1"))
				g.Expect(getCN(g, ns, "cn-b").Status.Available).To(HaveKey("h3"))
			}, timeout).Should(Succeed())
			access := func(port string) string {
				p, _ := srv.Config.Port(port)
				return fmt.Sprintf("%s %d", p.Mode, p.Access)
			}

			selectHost(t, ns, "h1", "cn-a")
			selectHost(t, ns, "h2", "cn-a")
			for _, h := range []string{"h1", "h2"} {
				g.Eventually(func(g Gomega) {
					g.Expect(state(g, ns, "cn-a", h).State).To(Equal(netv1.HostReady), "host %s", h)
				}, timeout).Should(Succeed())
			}
			g.Expect(access(vs.ports[0])).To(Equal("access 1001"))
			g.Expect(access(vs.ports[1])).To(Equal("access 1001"))

			// The switch refuses a line of h3's join: the host's state carries its message,
			// then the retry (the switch accepts it this time) ends ready.
			srv.FailOn(vs.join)
			selectHost(t, ns, "h3", "cn-b")
			g.Eventually(func(g Gomega) {
				st := state(g, ns, "cn-b", "h3")
				g.Expect(st.State).To(Equal(netv1.HostError))
				g.Expect(st.Message).To(ContainSubstring(vs.refused))
			}, timeout).Should(Succeed())
			t.Logf("h3's state as a user sees it: %s", state(g, ns, "cn-b", "h3").Message)
			g.Eventually(func(g Gomega) {
				g.Expect(state(g, ns, "cn-b", "h3").State).To(Equal(netv1.HostReady))
			}, timeout).Should(Succeed())
			g.Expect(access(vs.ports[2])).To(Equal("access 1002"))

			// Nothing changed: another reconcile logs in, reads, and sends nothing.
			srv.Commands()
			logins := srv.Logins()
			poke(t, ns)
			time.Sleep(3 * time.Second)
			g.Expect(srv.Commands()).To(BeEmpty(), "a reconcile with nothing changed sent commands")
			g.Expect(srv.Logins()).To(BeNumerically(">", logins), "the reconcile did not read the switch")

			// The connection drops half-way through h2's leaving: the retry puts the port back.
			srv.DropOn(vs.leave)
			selectHost(t, ns, "h2", "")
			g.Eventually(func() string { return access(vs.ports[1]) }, timeout).Should(Equal("access 1"))
			g.Expect(access(vs.ports[0])).To(Equal("access 1001"), "h1 kept its VLAN")
		})
	}
}

// The image's manager drives a gNMI switch: the credentials come from a kubernetes.io/tls Secret
// that also carries a username and password; hosts join in one Set, and nothing is sent when
// nothing changed.
func TestControllersDriveAGNMISwitch(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	tg := gnmitest.Start(t, "Ethernet1", "Ethernet2")
	startFabricWith(t, ns, nil)
	create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "leaf1-gnmi"},
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: tg.ClientCertPEM, corev1.TLSPrivateKeyKey: tg.ClientKeyPEM, "ca.crt": tg.CAPEM,
			corev1.BasicAuthUsernameKey: []byte(tg.Username), corev1.BasicAuthPasswordKey: []byte(tg.Password)},
	}, &netv1.NetworkDevice{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd1"},
		Spec: netv1.NetworkDeviceSpec{Switches: []netv1.Switch{{
			Name: "leaf1", Address: tg.Host, Port: int32(tg.Port), NetworkOS: netv1.NetworkOSOpenConfig,
			CredentialsRef: &netv1.SecretReference{Name: "leaf1-gnmi"},
		}}},
	})
	for i, h := range []string{"h1", "h2"} {
		create(t, &netv1.NIC{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nic-" + h},
			Spec: netv1.NICSpec{Node: h, NetworkDeviceRef: "nd1", NICs: []netv1.HostNIC{{
				NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: "leaf1", Port: intstr.FromString(fmt.Sprintf("Ethernet%d", i+1))}},
				Capability:    netv1.NICCapability{Speed: 1000},
			}}},
		})
	}
	create(t, clusterNetwork(ns, "cn-a", "1001-1001", "control"))
	g.Eventually(func(g Gomega) {
		g.Expect(getCN(g, ns, "cn-a").Status.Available).To(HaveKey("h2"))
	}, timeout).Should(Succeed())
	selectHost(t, ns, "h1", "cn-a")
	selectHost(t, ns, "h2", "cn-a")
	for _, h := range []string{"h1", "h2"} {
		g.Eventually(func(g Gomega) {
			g.Expect(state(g, ns, "cn-a", h).State).To(Equal(netv1.HostReady), "host %s", h)
		}, timeout).Should(Succeed())
	}
	for _, p := range []string{"Ethernet1", "Ethernet2"} {
		g.Expect(tg.Leaf("/interfaces/interface[name=" + p + "]/ethernet/switched-vlan/config/access-vlan")).To(Equal("1001"))
	}
	g.Expect(tg.Leaf("/network-instances/network-instance[name=default]/vlans/vlan[vlan-id=1001]/config/vlan-id")).To(Equal("1001"))
	sets := tg.Sets()
	poke(t, ns)
	time.Sleep(3 * time.Second)
	g.Expect(tg.Sets()).To(Equal(sets), "a reconcile with nothing changed sent a Set")
}
