package clusternetwork_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/devenv/standin"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// A host joins a ClusterNetwork, its switch ports carry the networks' VLANs, and when it leaves
// they go back to the idle VLAN and the VLANs leave the switches. Ports of other hosts and
// ports the controller never configured stay as they were.
func TestHostJoinsAndLeaves(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	drv := standin.New("openvswitch")
	s1, s2 := drv.Switch(ns+"-switch1"), drv.Switch(ns+"-switch2")
	s1.AddPorts(1, "p-bm0", "p-bm1", "uplink")
	s2.AddPorts(1, "p-bm0", "p-bm1")
	startFabric(t, ns, drv)
	create(t, networkDevice(ns, "switch1", "switch2"), hostNIC(ns, "bm0"), hostNIC(ns, "bm1"),
		clusterNetwork(ns, "cn1", "1000-1999", "control", "data"))

	g.Eventually(func(g Gomega) {
		cn := getCN(g, ns, "cn1")
		g.Expect(cn.Status.Networks).To(Equal([]netv1.NetworkStatus{{Name: "control", VLANID: 1000}, {Name: "data", VLANID: 1001}}))
		g.Expect(cn.Status.Available).To(Equal(map[string]string{"bm0": "nic-bm0", "bm1": "nic-bm1"}))
		g.Expect(cn.Status.Selected).To(BeEmpty())
	}, timeout).Should(Succeed())

	selectHost(t, ns, "bm0", "cn1")
	g.Eventually(func(g Gomega) {
		cn := getCN(g, ns, "cn1")
		g.Expect(cn.Status.Selected).To(Equal([]string{"bm0"}))
		g.Expect(cn.Status.States).To(HaveKeyWithValue("bm0", netv1.HostNetworkState{NIC: "nic-bm0", State: netv1.HostReady}))
		g.Expect(cn.Status.Available).To(Equal(map[string]string{"bm1": "nic-bm1"}))
	}, timeout).Should(Succeed())
	p, _ := s1.Port("p-bm0")
	g.Expect(p).To(Equal(fabric.Port{Name: "p-bm0", Mode: fabric.ModeAccess, VLAN: 1000}))
	p, _ = s2.Port("p-bm0")
	g.Expect(p).To(Equal(fabric.Port{Name: "p-bm0", Mode: fabric.ModeAccess, VLAN: 1001}))
	p, _ = s1.Port("p-bm1")
	g.Expect(p.VLAN).To(Equal(1), "another host's port is untouched")
	g.Expect(s1.VLANs()).To(Equal([]int{1000}))

	nic := &netv1.NIC{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "nic-bm0"}, nic)).To(Succeed())
	g.Expect(nic.Status.ClusterNetwork).To(Equal("cn1"))
	g.Expect(nic.Status.NICs).To(Equal([]*netv1.NICAssignment{
		{Network: "control", VLANID: 1000, PortMode: netv1.PortModeAccess},
		{Network: "data", VLANID: 1001, PortMode: netv1.PortModeAccess},
	}))

	// Idempotence: a reconcile with nothing changed sends nothing to the switches.
	a1, c1 := s1.Counts()
	nd := &netv1.NetworkDevice{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "nd1"}, nd)).To(Succeed())
	base := nd.DeepCopy()
	nd.Annotations = map[string]string{"poke": "1"}
	g.Expect(env.Client.Patch(context.Background(), nd, client.MergeFrom(base))).To(Succeed())
	g.Consistently(func() [2]int { a, c := s1.Counts(); return [2]int{a, c} }, 3*time.Second).Should(Equal([2]int{a1, c1}))

	selectHost(t, ns, "bm0", "")
	g.Eventually(func(g Gomega) {
		p, _ := s1.Port("p-bm0")
		g.Expect(p).To(Equal(fabric.Port{Name: "p-bm0", Mode: fabric.ModeAccess, VLAN: 1}))
		g.Expect(s1.VLANs()).To(BeEmpty(), "no port uses VLAN 1000 any more")
		cn := getCN(g, ns, "cn1")
		g.Expect(cn.Status.Selected).To(BeEmpty())
		g.Expect(cn.Status.Available).To(HaveKey("bm0"))
	}, timeout).Should(Succeed())
	p, _ = s1.Port("uplink")
	g.Expect(p.VLAN).To(Equal(1))
	for _, line := range s1.Log() {
		g.Expect(line).NotTo(ContainSubstring("uplink"), "a port the controller never configured is never touched")
	}
}

// VLAN ids are unique per NetworkDevice; a range that runs out says so, and the ClusterNetwork
// gets its id once another frees one.
func TestVLANExhaustionAndRelease(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	startFabric(t, ns, standin.New("openvswitch"))
	pinned := clusterNetwork(ns, "pinned", "1000-1001", "a")
	pin := int32(1001)
	pinned.Spec.Networks[0].VLANID = &pin
	create(t, networkDevice(ns, "switch1"), clusterNetwork(ns, "first", "1000-1001", "a"), pinned)
	g.Eventually(func(g Gomega) {
		g.Expect(getCN(g, ns, "first").Status.Networks).To(Equal([]netv1.NetworkStatus{{Name: "a", VLANID: 1000}}))
		g.Expect(getCN(g, ns, "pinned").Status.Networks).To(Equal([]netv1.NetworkStatus{{Name: "a", VLANID: 1001}}))
	}, timeout).Should(Succeed())

	create(t, clusterNetwork(ns, "late", "1000-1001", "a"))
	g.Eventually(func(g Gomega) {
		cn := getCN(g, ns, "late")
		g.Expect(cn.Status.Networks).To(BeEmpty())
		g.Expect(condition(cn.Status.Conditions, netv1.ConditionVLANsAssigned)).To(
			Equal("False VLANRangeExhausted: vlanRange 1000-1001 has no free VLAN id left on NetworkDevice nd1 for network a; widen vlanRange or delete a ClusterNetwork using it (retried when an id frees)"))
	}, timeout).Should(Succeed())

	g.Expect(env.Client.Delete(context.Background(), getCN(g, ns, "first"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		cn := getCN(g, ns, "late")
		g.Expect(cn.Status.Networks).To(Equal([]netv1.NetworkStatus{{Name: "a", VLANID: 1000}}))
		g.Expect(condition(cn.Status.Conditions, netv1.ConditionVLANsAssigned)).To(HavePrefix("True"))
	}, timeout).Should(Succeed())
}

// Two managers (as during a leader hand-over, or a split brain) assign VLANs to many
// ClusterNetworks of one NetworkDevice at once: no id is given twice.
func TestTwoManagersNeverAssignOneVLANTwice(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	startFabric(t, ns, standin.New("openvswitch"))
	startFabric(t, ns, standin.New("openvswitch"))
	create(t, networkDevice(ns, "switch1"))
	const n = 12
	for i := range n {
		create(t, clusterNetwork(ns, fmt.Sprintf("cn%d", i), "1000-1999", "a", "b"))
	}
	g.Eventually(func(g Gomega) {
		seen := map[int32]string{}
		for i := range n {
			cn := getCN(g, ns, fmt.Sprintf("cn%d", i))
			g.Expect(cn.Status.Networks).To(HaveLen(2))
			for _, s := range cn.Status.Networks {
				g.Expect(seen).NotTo(HaveKey(s.VLANID), "VLAN %d given to %s and %s/%s", s.VLANID, seen[s.VLANID], cn.Name, s.Name)
				seen[s.VLANID] = cn.Name + "/" + s.Name
			}
		}
		leases := &coordinationv1.LeaseList{}
		g.Expect(env.Client.List(context.Background(), leases, client.InNamespace(ns))).To(Succeed())
		g.Expect(leases.Items).To(HaveLen(2*n), "one lock per assigned id, none left behind")
	}, timeout).Should(Succeed())
}

// A switch that is down: the NetworkDevice says so, the hosts on it are in error with the
// message, and once it is back the controller retries by itself and the hosts become ready.
func TestSwitchDownThenUp(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	drv := standin.New("openvswitch")
	s1 := drv.Switch(ns + "-switch1")
	s1.AddPorts(1, "p-bm0")
	drv.Switch(ns+"-switch2").AddPorts(1, "p-bm0")
	s1.SetDown(true)
	startFabric(t, ns, drv)
	create(t, networkDevice(ns, "switch1", "switch2"), hostNIC(ns, "bm0"), clusterNetwork(ns, "cn1", "1000-1999", "control", "data"))
	selectHost(t, ns, "bm0", "cn1")
	g.Eventually(func(g Gomega) {
		st := state(g, ns, "cn1", "bm0")
		g.Expect(st.State).To(Equal(netv1.HostError))
		g.Expect(st.Message).To(ContainSubstring("switch switch1: switch switch1 at " + ns + "-switch1: stand-in switch is down"))
		nd := &netv1.NetworkDevice{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "nd1"}, nd)).To(Succeed())
		g.Expect(condition(nd.Status.Conditions, netv1.ConditionReachable)).To(HavePrefix("False Unreachable: switch switch1: "))
	}, timeout).Should(Succeed())

	s1.SetDown(false)
	g.Eventually(func(g Gomega) {
		g.Expect(state(g, ns, "cn1", "bm0").State).To(Equal(netv1.HostReady))
		p, _ := s1.Port("p-bm0")
		g.Expect(p.VLAN).To(Equal(1000))
	}, timeout).Should(Succeed())
}

// Deleting a ClusterNetwork resets every selected host's ports, removes its VLANs from the
// switches, frees its VLAN ids, and only then lets the object go.
func TestDeletingAClusterNetwork(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	drv := standin.New("openvswitch")
	s1, s2 := drv.Switch(ns+"-switch1"), drv.Switch(ns+"-switch2")
	s1.AddPorts(1, "p-bm0", "p-bm1")
	s2.AddPorts(1, "p-bm0", "p-bm1")
	startFabric(t, ns, drv)
	create(t, networkDevice(ns, "switch1", "switch2"), hostNIC(ns, "bm0"), hostNIC(ns, "bm1"), clusterNetwork(ns, "cn1", "1000-1999", "control", "data"))
	selectHost(t, ns, "bm0", "cn1")
	selectHost(t, ns, "bm1", "cn1")
	g.Eventually(func(g Gomega) {
		cn := getCN(g, ns, "cn1")
		g.Expect(cn.Status.States).To(HaveLen(2))
		for _, s := range cn.Status.States {
			g.Expect(s.State).To(Equal(netv1.HostReady))
		}
	}, timeout).Should(Succeed())
	g.Expect(s2.VLANs()).To(Equal([]int{1001}))

	g.Expect(env.Client.Delete(context.Background(), getCN(g, ns, "cn1"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "cn1"}, &netv1.ClusterNetwork{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "ClusterNetwork gone: %v", err)
	}, timeout).Should(Succeed())
	for _, sw := range []*standin.Switch{s1, s2} {
		g.Expect(sw.VLANs()).To(BeEmpty())
		for _, port := range []string{"p-bm0", "p-bm1"} {
			p, _ := sw.Port(port)
			g.Expect(p).To(Equal(fabric.Port{Name: port, Mode: fabric.ModeAccess, VLAN: 1}))
		}
	}
	leases := &coordinationv1.LeaseList{}
	g.Expect(env.Client.List(context.Background(), leases, client.InNamespace(ns))).To(Succeed())
	g.Expect(leases.Items).To(BeEmpty())
	nics := &netv1.NICList{}
	g.Expect(env.Client.List(context.Background(), nics, client.InNamespace(ns))).To(Succeed())
	for _, n := range nics.Items {
		g.Expect(n.Labels).NotTo(HaveKey(netv1.SelectedForLabel))
		g.Expect(n.Status.ClusterNetwork).To(BeEmpty())
	}
}

// A NIC cabled to a switch the NetworkDevice lacks is not available, and the ClusterNetwork
// names the field and the fix.
func TestMiscabledNIC(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	startFabric(t, ns, standin.New("openvswitch"))
	bad := hostNIC(ns, "bm9")
	bad.Spec.NICs[1].NetworkDevice.Switch.Name = "switch9"
	create(t, networkDevice(ns, "switch1", "switch2"), bad, clusterNetwork(ns, "cn1", "1000-1999", "control"))
	g.Eventually(func(g Gomega) {
		cn := getCN(g, ns, "cn1")
		g.Expect(cn.Status.Available).To(BeEmpty())
		g.Expect(condition(cn.Status.Conditions, netv1.ConditionNICsValid)).To(Equal(
			`False NICMiscabled: NIC nic-bm9: spec.nics[1].networkDevice.switch.name: "switch9" is not a switch of NetworkDevice nd1 (switches: switch1, switch2); correct the name or add the switch`))
	}, timeout).Should(Succeed())
}
