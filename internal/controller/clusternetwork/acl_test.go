package clusternetwork_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// flowsOf are the bridge's flows of one cookie, as ovs-ofctl shows them.
func flowsOf(t *testing.T, sw *ovstest.Switch, bridge string, cookie uint64) []string {
	var out []string
	for _, l := range strings.Split(sw.Ofctl(t, "dump-flows", "--no-stats", bridge), "\n") {
		if strings.Contains(l, fmt.Sprintf("cookie=%#x,", cookie)) {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// The image's manager applies a network's acl and portStatus on a real Open vSwitch through each
// shipped driver: with `deny ssh` then allow all (ingress), a host cannot open port 22 on
// another while port 80 and ping pass; the NIC status shows each card's list; a reconcile with
// nothing changed sends nothing; portStatus down fences the hosts (they reach nobody, the
// NetworkDevice says the ports are down) and up lets them reach again; a host leaving takes
// exactly its list's flows away; a flow added by hand survives all of it, and deleting the
// ClusterNetwork leaves no flow of metalwire's.
func TestControllersApplyACLsAndPortStatusOnARealOpenvSwitch(t *testing.T) {
	for _, tc := range realLeaves {
		t.Run(tc.name, func(t *testing.T) {
			ovstest.Require(t, "ovs-vswitchd", "ovs-ofctl", "ip", "ping")
			g := NewWithT(t)
			ctx := context.Background()
			ns := env.NewNamespace(t)
			f := ovstest.NewFabric(t)
			f.Switch.OpenMgmt(t, f.Bridge)
			const handCookie = 0x1234
			f.Switch.Ofctl(t, "add-flow", f.Bridge, fmt.Sprintf("cookie=%#x,priority=100,icmp,nw_src=203.0.113.9,actions=NORMAL", handCookie))
			before := f.Switch.Ports(t)
			startFabricWith(t, ns, nil)

			leaf, secret := tc.leaf(t, f.Switch, f.Bridge, ns)
			if leaf.NetworkOS == netv1.NetworkOSOpenvSwitch {
				// OVSDB over tcp: the bridge's OpenFlow endpoint is named.
				leaf.OpenFlowRemote = f.Switch.MgmtRemote(f.Bridge)
			}
			create(t, &netv1.NetworkDevice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd1"}, Spec: netv1.NetworkDeviceSpec{Switches: []netv1.Switch{leaf}}})
			if secret != nil {
				create(t, secret)
			}
			hosts := []*ovstest.Host{f.H1, f.H2}
			for _, h := range hosts {
				create(t, &netv1.NIC{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nic-" + h.Name},
					Spec: netv1.NICSpec{Node: h.Name, NetworkDeviceRef: "nd1", NICs: []netv1.HostNIC{{
						Name: "eno1", MAC: h.MAC(t),
						NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: "leaf1", Port: intstr.FromString(h.Port)}},
						Capability:    netv1.NICCapability{Speed: 1000},
					}}},
				})
			}
			ovstest.ListenTCP(t, f.H2, 22)
			ovstest.ListenTCP(t, f.H2, 80)
			cn := clusterNetwork(ns, "cn-a", "1001-1001", "control")
			cn.Spec.Networks[0].ACL = []netv1.ACLRule{
				{Direction: netv1.ACLIngress, Protocol: "ssh", Action: netv1.ACLDeny},
				{Direction: netv1.ACLIngress, Protocol: "all", Action: netv1.ACLAllow},
			}
			create(t, cn)
			g.Eventually(func(g Gomega) {
				g.Expect(getCN(g, ns, "cn-a").Status.Available).To(HaveKey("h1"))
				g.Expect(getCN(g, ns, "cn-a").Status.Available).To(HaveKey("h2"))
			}, timeout).Should(Succeed())
			for _, h := range hosts {
				selectHost(t, ns, h.Name, "cn-a")
			}
			for _, h := range hosts {
				g.Eventually(func(g Gomega) {
					g.Expect(state(g, ns, "cn-a", h.Name).State).To(Equal(netv1.HostReady), "host %s", h.Name)
				}, timeout).Should(Succeed())
			}

			// Each card's list in the NIC status; the list's flows on the bridge, under its cookie.
			for _, h := range hosts {
				nic := &netv1.NIC{}
				g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nic-" + h.Name}, nic)).To(Succeed())
				g.Expect(nic.Status.NICs).To(HaveLen(1))
				g.Expect(nic.Status.NICs[0].ACLs).To(ConsistOf(HaveField("Name", fabric.ACLName(h.Name, "control"))))
				g.Expect(flowsOf(t, f.Switch, f.Bridge, fabric.ACLCookie(h.Name, "control"))).To(ContainElement(ContainSubstring("tp_dst=22 actions=drop")), "host %s", h.Name)
			}
			g.Expect(ovstest.ConnectsTCP(t, f.H1, f.H2.Addr, 22, 2)).To(BeFalse(), "h1 opens h2's port 22 through deny ssh")
			g.Expect(ovstest.ConnectsTCP(t, f.H1, f.H2.Addr, 80, 10)).To(BeTrue(), "h1 cannot open h2's port 80")
			g.Expect(ovstest.Reaches(t, f.H1, f.H2.Addr, 8)).To(BeTrue(), "h1 cannot ping h2")

			// Nothing changed: a reconcile sends nothing (no Port row, no flow written).
			versions, flows := f.Switch.PortVersions(t), f.Switch.Ofctl(t, "dump-flows", "--no-stats", f.Bridge)
			poke(t, ns)
			time.Sleep(3 * time.Second)
			g.Expect(f.Switch.PortVersions(t)).To(Equal(versions), "a reconcile with nothing changed wrote a Port row")
			g.Expect(f.Switch.Ofctl(t, "dump-flows", "--no-stats", f.Bridge)).To(Equal(flows), "a reconcile with nothing changed wrote flows")

			// portStatus down fences both hosts; up again, they reach each other.
			setPortStatus := func(s netv1.PortStatus) {
				g.Eventually(func(g Gomega) {
					cur := getCN(g, ns, "cn-a")
					cur.Spec.Networks[0].PortStatus = s
					g.Expect(env.Client.Update(ctx, cur)).To(Succeed())
				}, timeout).Should(Succeed())
			}
			portDown := func(g Gomega, port string) bool {
				nd := &netv1.NetworkDevice{}
				g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nd1"}, nd)).To(Succeed())
				for _, s := range nd.Status.Switches {
					for _, p := range s.Ports {
						if p.Name == port {
							return p.Down
						}
					}
				}
				return false
			}
			setPortStatus(netv1.PortDown)
			g.Eventually(func(g Gomega) {
				g.Expect(portDown(g, f.H1.Port)).To(BeTrue())
				g.Expect(portDown(g, f.H2.Port)).To(BeTrue())
				for _, h := range hosts {
					g.Expect(state(g, ns, "cn-a", h.Name).State).To(Equal(netv1.HostReady), "host %s", h.Name)
				}
			}, timeout).Should(Succeed())
			g.Expect(f.Switch.Vsctl(t, "get", "Interface", f.H2.Port, "admin_state")).To(ContainSubstring("down"))
			g.Expect(ovstest.Reaches(t, f.H1, f.H2.Addr, 2)).To(BeFalse(), "h1 reaches h2 with their ports down")
			setPortStatus(netv1.PortUp)
			g.Eventually(func(g Gomega) {
				g.Expect(portDown(g, f.H1.Port)).To(BeFalse())
				g.Expect(portDown(g, f.H2.Port)).To(BeFalse())
			}, timeout).Should(Succeed())
			g.Expect(ovstest.Reaches(t, f.H1, f.H2.Addr, 15)).To(BeTrue(), "h1 cannot reach h2 with their ports up again")

			// h1 leaves: exactly its list's flows go.
			h2Flows := flowsOf(t, f.Switch, f.Bridge, fabric.ACLCookie("h2", "control"))
			selectHost(t, ns, "h1", "")
			g.Eventually(func() []string { return flowsOf(t, f.Switch, f.Bridge, fabric.ACLCookie("h1", "control")) }, timeout).Should(BeEmpty())
			g.Expect(flowsOf(t, f.Switch, f.Bridge, fabric.ACLCookie("h2", "control"))).To(Equal(h2Flows))
			g.Expect(flowsOf(t, f.Switch, f.Bridge, handCookie)).To(HaveLen(1), "the hand-written flow")

			// The ClusterNetwork deleted: the ports as they were, no flow of metalwire's, the
			// hand-written one still there.
			g.Expect(env.Client.Delete(ctx, &netv1.ClusterNetwork{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cn-a"}})).To(Succeed())
			g.Eventually(func() bool {
				return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cn-a"}, &netv1.ClusterNetwork{}))
			}, timeout).Should(BeTrue())
			g.Eventually(func() map[string]ovstest.PortRow { return f.Switch.Ports(t) }, timeout).Should(Equal(before))
			g.Eventually(func() string { return f.Switch.Ofctl(t, "dump-flows", f.Bridge) }, timeout).ShouldNot(ContainSubstring("cookie=0x6d77"))
			g.Expect(flowsOf(t, f.Switch, f.Bridge, handCookie)).To(HaveLen(1), "the hand-written flow")
		})
	}
}
