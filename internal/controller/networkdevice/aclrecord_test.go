package networkdevice_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/networkdevice"
	"github.com/metalwire/metalwire/internal/devenv/standin"
	"github.com/metalwire/metalwire/internal/switchdriver"
	"github.com/metalwire/metalwire/pkg/fabric"
)

func denySSH() []netv1.CardACLRule {
	return []netv1.CardACLRule{{Direction: netv1.ACLIngress, Protocol: "ssh", Action: netv1.ACLDeny}, {Direction: netv1.ACLIngress, Protocol: "all", Action: netv1.ACLAllow}}
}

// Every host's list of a network holds the same rules, so the switch's record names each list
// once under what it holds: 50 bonds' lists (a switch of the 1,000-host benchmark) are one
// entry of 50 names, and a trunk network's list, another VLAN and another rule count, is an
// entry of its own. The ports no longer repeat them.
func TestListsAreRecordedOncePerSwitchUnderWhatTheyHold(t *testing.T) {
	g := NewWithT(t)
	nd := &netv1.NetworkDevice{Spec: netv1.NetworkDeviceSpec{Switches: []netv1.Switch{{Name: "sw1"}}}}
	card := func(port string) netv1.HostNIC {
		return netv1.HostNIC{NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: "sw1", Port: intstr.FromString(port)}}}
	}
	var nics []netv1.NIC
	var names []string
	for h := range 50 {
		host := fmt.Sprintf("host%04d", h)
		names = append(names, fabric.ACLName(host, "control"))
		a := netv1.NICAssignment{Network: "control", VLANID: 1000, PortMode: netv1.PortModeAccess,
			LAG:  &netv1.CardLAG{Name: fabric.LAGName(host, "control"), Mode: netv1.LAGLACP},
			ACLs: []netv1.CardACL{{Network: "control", Name: fabric.ACLName(host, "control"), Rules: denySSH()}}}
		nic := netv1.NIC{Status: netv1.NICStatus{ClusterNetwork: "cn"}}
		for c := range 2 {
			nic.Spec.NICs = append(nic.Spec.NICs, card(fmt.Sprintf("p%04d", 2*h+c)))
			nic.Status.NICs = append(nic.Status.NICs, a.DeepCopy())
		}
		nics = append(nics, nic)
	}
	trunkList := fabric.ACLName("t1", "data")
	nics = append(nics, netv1.NIC{Spec: netv1.NICSpec{NICs: []netv1.HostNIC{card("t1")}}, Status: netv1.NICStatus{ClusterNetwork: "cn",
		NICs: []*netv1.NICAssignment{{Network: "data", VLANID: 1001, PortMode: netv1.PortModeTrunk,
			ACLs: []netv1.CardACL{{Network: "data", Name: trunkList, Default: netv1.ACLDeny, Rules: denySSH()[:1]}}}}}})
	want := fabric.Desired(networkdevice.PortWants(nd, nics))["sw1"]

	slices.Sort(names)
	g.Expect(networkdevice.ConfiguredACLs(want)).To(Equal([]netv1.ConfiguredACLs{
		{Rules: 2, Names: names},
		{Rules: 1, Default: netv1.ACLDeny, VLAN: 1001, Names: []string{trunkList}},
	}))
	for _, p := range networkdevice.ConfiguredPorts(want) {
		g.Expect(p.ACLs).To(BeEmpty(), "port %s", p.Name)
	}
	// What the lists add to the record: a name each, and the entry once.
	b, err := json.Marshal(networkdevice.ConfiguredACLs(want))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(len(b)).To(BeNumerically("<=", 51*len(`"acl0123456789",`)+2*len(`{"rules":2,"default":"deny","vlan":1001,"names":[]},`)))

	// Read back, the record binds every list, with what it holds.
	st := netv1.SwitchStatus{ACLs: networkdevice.ConfiguredACLs(want)}
	bound := st.BoundACLs()
	g.Expect(bound).To(HaveLen(51))
	g.Expect(bound[trunkList]).To(Equal(netv1.ConfiguredACL{Name: trunkList, VLAN: 1001, Rules: 1, Default: netv1.ACLDeny}))
	allow := bound[names[7]]
	g.Expect(allow.DefaultAction()).To(Equal(netv1.ACLAllow))
}

// A manager before the per-switch record wrote a port's lists on the port (ports[].acls). After
// an upgrade the controller meets such a record: it still finds the lists it bound there, so a
// host that leaves has its list removed from the switch, and the record is written anew
// without them.
func TestAListRecordedOnItsPortBeforeTheUpgradeIsStillRemoved(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	drv := standin.New("openvswitch")
	drv.Switch(ns+"-sw1").AddPorts(1, "p-a", "p-b")
	reg := &switchdriver.Registry{}
	reg.Register(drv)
	cs, err := kubernetes.NewForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())

	nd := &netv1.NetworkDevice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd1"},
		Spec: netv1.NetworkDeviceSpec{Switches: []netv1.Switch{{Name: "sw1", Address: ns + "-sw1", NetworkOS: netv1.NetworkOSOpenvSwitch}}}}
	g.Expect(env.Client.Create(ctx, nd)).To(Succeed())
	lists := map[string]string{}
	for _, h := range []string{"a", "b"} {
		lists[h] = fabric.ACLName(h, "control")
		nic := &netv1.NIC{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nic-" + h},
			Spec: netv1.NICSpec{Node: h, NetworkDeviceRef: "nd1", NICs: []netv1.HostNIC{{MAC: "52:54:00:00:00:0" + map[string]string{"a": "1", "b": "2"}[h],
				NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: "sw1", Port: intstr.FromString("p-" + h)}},
				Capability:    netv1.NICCapability{Speed: 1000}}}}}
		g.Expect(env.Client.Create(ctx, nic)).To(Succeed())
		base := nic.DeepCopy()
		nic.Status = netv1.NICStatus{ClusterNetwork: "cn1", NICs: []*netv1.NICAssignment{{Network: "control", VLANID: 1000, PortMode: netv1.PortModeAccess,
			ACLs: []netv1.CardACL{{Network: "control", Name: lists[h], Default: netv1.ACLAllow, Rules: denySSH()}}}}}
		g.Expect(env.Client.Status().Patch(ctx, nic, client.MergeFrom(base))).To(Succeed())
	}
	fresh := func() *netv1.NetworkDevice {
		out := &netv1.NetworkDevice{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(nd), out)).To(Succeed())
		return out
	}
	// A manager started anew (an upgrade) each time: no memory of what it wrote before.
	pass := func() {
		t.Helper()
		r := (&networkdevice.Reconciler{Client: &laggingCache{Client: env.Client, nd: fresh()}, Drivers: reg, PassQuiet: -1, ReadAgainAfter: time.Hour}).WithoutManager(cs)
		_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(nd)})
		g.Expect(err).NotTo(HaveOccurred())
	}

	pass()
	sw := fresh().Status.Switches[0]
	g.Expect(sw.ACLs).To(Equal([]netv1.ConfiguredACLs{{Rules: 2, Names: slices.Sorted(slices.Values([]string{lists["a"], lists["b"]}))}}))
	g.Expect(drv.Switch(ns + "-sw1").Log()).To(ContainElements(HavePrefix("ensure-acl "+lists["a"]+" on p-a"), HavePrefix("ensure-acl "+lists["b"]+" on p-b")))

	// The record as the older manager wrote it: each list on its port, none for the switch.
	old := fresh()
	base := old.DeepCopy()
	old.Status.Switches[0].ACLs = nil
	for i, p := range old.Status.Switches[0].Ports {
		old.Status.Switches[0].Ports[i].ACLs = []netv1.ConfiguredACL{{Name: lists[p.Name[len("p-"):]], Rules: 2}}
	}
	g.Expect(env.Client.Status().Patch(ctx, old, client.MergeFrom(base))).To(Succeed())
	g.Expect(fresh().Status.Switches[0].BoundACLs()).To(HaveLen(2))

	// Host a leaves: its list goes from the switch, b's stays, and the record is the new one.
	nic := &netv1.NIC{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nic-a"}, nic)).To(Succeed())
	nicBase := nic.DeepCopy()
	nic.Status = netv1.NICStatus{}
	g.Expect(env.Client.Status().Patch(ctx, nic, client.MergeFrom(nicBase))).To(Succeed())
	before := len(drv.Switch(ns + "-sw1").Log())
	pass()
	g.Expect(drv.Switch(ns + "-sw1").Log()[before:]).To(ContainElement("remove-acl " + lists["a"] + " on p-a"))
	g.Expect(drv.Switch(ns + "-sw1").Log()[before:]).NotTo(ContainElement(ContainSubstring(lists["b"])), "b's list is as it was")
	sw = fresh().Status.Switches[0]
	g.Expect(sw.ACLs).To(Equal([]netv1.ConfiguredACLs{{Rules: 2, Names: []string{lists["b"]}}}))
	for _, p := range sw.Ports {
		g.Expect(p.ACLs).To(BeEmpty(), "port %s: the old field is not written again", p.Name)
	}
	port, _ := drv.Switch(ns + "-sw1").Port("p-a")
	g.Expect(port.VLAN).To(Equal(1), "a's port is idle again")
}
