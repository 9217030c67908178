package clusternetwork_test

import (
	"maps"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/switchtest/vendortest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// bothAny is an entry's source and destination when both are any.
const bothAny = "any " + "any"

// The image's manager binds a network's acl on each vendor OS whose driver writes lists,
// emulated over SSH: the host ends ready with its lists (IPv4 and IPv6, in and out) on its port,
// holding the ssh rule and the default; a reconcile with nothing changed sends nothing (the lists
// read back as the same rules, also where the switch keeps no remark and shows ssh as port 22,
// or keeps the list as CONFIG_DB rows, SONiC); the host leaving removes its lists.
func TestControllersBindAccessListsOnVendorSwitches(t *testing.T) {
	// cliLists checks an IOS-like switch: the inbound IPv4 list holds the ssh entry (as the
	// switch shows it) and the default deny, and the port binds four lists.
	cliLists := func(port, sshDeny string) func(Gomega, *vendortest.Server, string) {
		return func(g Gomega, srv *vendortest.Server, name string) {
			in, ok := srv.Config.ACL(name + "-in")
			g.Expect(ok).To(BeTrue(), "no inbound IPv4 list %s-in on the switch", name)
			g.Expect(slices.Collect(maps.Values(in.Entries))).To(ContainElements(sshDeny, "deny ip "+bothAny))
			p, _ := srv.Config.Port(port)
			g.Expect(p.AccessGroups).To(HaveLen(4), "port %s binds %q", port, p.AccessGroups)
		}
	}
	cliGone := func(port string) func(Gomega, *vendortest.Server) {
		return func(g Gomega, srv *vendortest.Server) {
			g.Expect(srv.Config.ACLNames()).To(BeEmpty())
			p, _ := srv.Config.Port(port)
			g.Expect(p.AccessGroups).To(BeEmpty())
		}
	}
	for _, c := range []struct {
		os    netv1.NetworkOS
		port  string
		lists func(g Gomega, srv *vendortest.Server, name string) // the host's lists are on the switch
		gone  func(g Gomega, srv *vendortest.Server)              // no list is left
	}{
		{netv1.NetworkOSEOS, "Ethernet1", cliLists("Ethernet1", "deny tcp "+bothAny+" eq ssh"), cliGone("Ethernet1")},
		{netv1.NetworkOSDellOS10, "ethernet1/1/1", cliLists("ethernet1/1/1", "deny tcp "+bothAny+" eq 22"), cliGone("ethernet1/1/1")},
		{netv1.NetworkOSSONiC, "Ethernet0", func(g Gomega, srv *vendortest.Server, name string) {
			tables := srv.Config.SONiCRows("ACL_TABLE")
			g.Expect(tables).To(HaveLen(4), "ACL tables %v", slices.Collect(maps.Keys(tables)))
			g.Expect(tables[name+"-in"]).To(HaveKeyWithValue("ports", []string{"Ethernet0"}))
			rules := srv.Config.SONiCRows("ACL_RULE")
			g.Expect(rules[name+"-in|RULE_1"]).To(And(HaveKeyWithValue("PACKET_ACTION", "DROP"), HaveKeyWithValue("L4_DST_PORT", "22")))
			g.Expect(rules[name+"-out6|DEFAULT"]).To(HaveKeyWithValue("PACKET_ACTION", "DROP"))
		}, func(g Gomega, srv *vendortest.Server) {
			g.Expect(srv.Config.SONiCRows("ACL_TABLE")).To(BeEmpty())
			g.Expect(srv.Config.SONiCRows("ACL_RULE")).To(BeEmpty())
		}},
	} {
		t.Run(string(c.os), func(t *testing.T) {
			g := NewWithT(t)
			ns := env.NewNamespace(t)
			srv := vendortest.Start(t, string(c.os), c.port)
			startFabricWith(t, ns, nil)
			create(t, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "leaf1-login"},
				Type:       corev1.SecretTypeBasicAuth,
				StringData: map[string]string{corev1.BasicAuthUsernameKey: srv.User, corev1.BasicAuthPasswordKey: srv.Password},
			}, &netv1.NetworkDevice{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd1"},
				Spec: netv1.NetworkDeviceSpec{Switches: []netv1.Switch{{
					Name: "leaf1", Address: srv.Host, Port: int32(srv.Port), NetworkOS: c.os,
					HostKey: srv.HostKey, CredentialsRef: &netv1.SecretReference{Name: "leaf1-login"},
				}}},
			}, &netv1.NIC{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nic-h1"},
				Spec: netv1.NICSpec{Node: "h1", NetworkDeviceRef: "nd1", NICs: []netv1.HostNIC{{
					Name: "eno1", MAC: "52:54:00:00:00:0a",
					NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: "leaf1", Port: intstr.FromString(c.port)}},
					Capability:    netv1.NICCapability{Speed: 1000},
				}}},
			})
			cn := clusterNetwork(ns, "cn-a", "1001-1001", "control")
			cn.Spec.Networks[0].ACL = []netv1.ACLRule{{Direction: netv1.ACLIngress, Protocol: "ssh", Action: netv1.ACLDeny}}
			cn.Spec.Networks[0].ACLDefault = netv1.ACLDeny
			create(t, cn)
			g.Eventually(func(g Gomega) {
				g.Expect(getCN(g, ns, "cn-a").Status.Available).To(HaveKey("h1"))
			}, timeout).Should(Succeed())
			selectHost(t, ns, "h1", "cn-a")
			g.Eventually(func(g Gomega) {
				g.Expect(state(g, ns, "cn-a", "h1").State).To(Equal(netv1.HostReady))
			}, timeout).Should(Succeed())

			name := fabric.ACLName("h1", "control")
			c.lists(g, srv, name)

			// Nothing changed: another reconcile reads the lists back as asked and sends nothing.
			srv.Commands()
			logins := srv.Logins()
			poke(t, ns)
			time.Sleep(3 * time.Second)
			g.Expect(srv.Commands()).To(BeEmpty(), "a reconcile with nothing changed sent commands")
			g.Expect(srv.Logins()).To(BeNumerically(">", logins), "the reconcile did not read the switch")

			// The host leaves: its lists are unbound and removed.
			selectHost(t, ns, "h1", "")
			g.Eventually(func(g Gomega) { c.gone(g, srv) }, timeout).Should(Succeed())
		})
	}
}
