package hostnic_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller"
	"github.com/metalwire/metalwire/internal/manager/managertest"
)

const timeout = 30 * time.Second

// host creates a BareMetalHost as BMO leaves it after inspection: two NICs, their LLDP, and
// fields metalwire does not model (they must survive untouched).
func host(t *testing.T, ns, name string, lldp1, lldp2 *bmov1.LLDP, ifaces ...bmov1.NetworkInterface) *bmov1.BareMetalHost {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "metal3.io/v1alpha1", "kind": "BareMetalHost",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec": map[string]any{
			"online": true, "bootMACAddress": "aa:00:00:00:01:01",
			"bmc":             map[string]any{"address": "redfish://192.0.2.9/redfish/v1/Systems/1", "credentialsName": name + "-bmc"},
			"rootDeviceHints": map[string]any{"deviceName": "/dev/sda"},
		},
	}}
	g.Expect(env.Client.Create(ctx, u)).To(Succeed())
	h := &bmov1.BareMetalHost{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(u), h)).To(Succeed())
	if len(ifaces) > 0 {
		base := h.DeepCopy()
		h.Spec.NetworkInterfaces = ifaces
		g.Expect(env.Client.Patch(ctx, h, client.MergeFrom(base))).To(Succeed())
	}
	base := h.DeepCopy()
	h.Status.HardwareDetails = &bmov1.HardwareDetails{NIC: []bmov1.NIC{
		{Name: "eno1", MAC: "aa:00:00:00:01:01", SpeedGbps: 25, LLDP: lldp1},
		{Name: "eno2", MAC: "aa:00:00:00:01:02", SpeedGbps: 1, LLDP: lldp2},
	}}
	g.Expect(env.Client.Status().Patch(ctx, h, client.MergeFrom(base))).To(Succeed())
	return h
}

func device(ns string) *netv1.NetworkDevice {
	return &netv1.NetworkDevice{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rack1"},
		Spec: netv1.NetworkDeviceSpec{Switches: []netv1.Switch{
			{Name: "leaf1", Address: "192.0.2.1", NetworkOS: netv1.NetworkOSSimulated, MACAddress: "02:00:00:00:00:01"},
			{Name: "leaf2", Address: "192.0.2.2", NetworkOS: netv1.NetworkOSSimulated},
		}},
	}
}

func getNIC(g Gomega, ns, name string) *netv1.NIC {
	nic := &netv1.NIC{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, nic)).To(Succeed())
	return nic
}

type card struct {
	name, mac, sw, port string
	speed               int32
}

func cards(n *netv1.NIC) []card {
	var out []card
	for _, c := range n.Spec.NICs {
		out = append(out, card{c.Name, c.MAC, c.NetworkDevice.Switch.Name, c.NetworkDevice.Switch.Port.String(), c.Capability.Speed})
	}
	return out
}

// A host's NIC object is made from its LLDP (switch by management MAC, or by system name) and
// its spec's switchPort (which wins), follows the host's data and goes with the host; BMO's
// fields of the host are never written.
func TestNICsFromTheHostsSwitchData(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	managertest.Start(t, env, ns, []controller.Group{controller.Fabric})
	g.Expect(env.Client.Create(ctx, device(ns))).To(Succeed())

	h := host(t, ns, "node-0",
		&bmov1.LLDP{SwitchID: "02:00:00:00:00:01", PortID: "Ethernet1"},
		&bmov1.LLDP{SwitchID: "0e:00:00:00:00:77", SwitchSystemName: "leaf2", PortID: "Ethernet5"})
	before := &unstructured.Unstructured{}
	before.SetGroupVersionKind(bmov1.GroupVersion.WithKind("BareMetalHost"))
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(h), before)).To(Succeed())

	g.Eventually(func(g Gomega) {
		n := getNIC(g, ns, "node-0")
		g.Expect(n.Labels).To(HaveKeyWithValue(netv1.GeneratedFromLabel, "baremetalhost"))
		g.Expect(n.Spec.Node).To(Equal("node-0"))
		g.Expect(n.Spec.NetworkDeviceRef).To(Equal("rack1"))
		g.Expect(cards(n)).To(Equal([]card{
			{"eno1", "aa:00:00:00:01:01", "leaf1", "Ethernet1", 25000}, // by management MAC
			{"eno2", "aa:00:00:00:01:02", "leaf2", "Ethernet5", 1000},  // by LLDP system name
		}))
		g.Expect(n.OwnerReferences).To(ContainElement(HaveField("Name", "node-0")))
	}, timeout).Should(Succeed())

	// The spec's switchPort overrides LLDP.
	cur := &bmov1.BareMetalHost{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(h), cur)).To(Succeed())
	base := cur.DeepCopy()
	cur.Spec.NetworkInterfaces = []bmov1.NetworkInterface{{MACAddress: "AA:00:00:00:01:01", SwitchPort: &bmov1.SwitchPort{SwitchID: "02:00:00:00:00:01", PortID: "Ethernet9"}}}
	g.Expect(env.Client.Patch(ctx, cur, client.MergeFrom(base))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(cards(getNIC(g, ns, "node-0"))[0].port).To(Equal("Ethernet9"))
	}, timeout).Should(Succeed(), "switchPort wins over LLDP, and the NIC follows the host's change")

	// metalwire wrote nothing of the host: BMO's object is as BMO (here the test) left it,
	// but for the one spec change the test made.
	after := &unstructured.Unstructured{}
	after.SetGroupVersionKind(before.GroupVersionKind())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(h), after)).To(Succeed())
	// The whole object: spec (but for the test's networkInterfaces), status, labels,
	// annotations, finalizers and owners as BMO left them.
	unstructured.RemoveNestedField(after.Object, "spec", "networkInterfaces")
	for _, path := range [][]string{{"spec"}, {"status"}, {"metadata", "labels"}, {"metadata", "annotations"}, {"metadata", "finalizers"}, {"metadata", "ownerReferences"}} {
		b, _, _ := unstructured.NestedFieldNoCopy(before.Object, path...)
		a, _, _ := unstructured.NestedFieldNoCopy(after.Object, path...)
		g.Expect(reflect.DeepEqual(a, b)).To(BeTrue(), "host field %v: %v, was %v", path, a, b)
	}
	g.Expect(after.GetManagedFields()).NotTo(ContainElement(HaveField("Manager", ContainSubstring("manager"))), "no write of the host by the manager")

	// The host goes: its generated NIC goes with it.
	g.Expect(env.Client.Delete(ctx, cur)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "node-0"}, &netv1.NIC{}))
	}, timeout).Should(BeTrue())
}

// A hand-written NIC object of a host always wins: the generated one goes and the hand-written
// one is never changed.
func TestAHandWrittenNICWins(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	managertest.Start(t, env, ns, []controller.Group{controller.Fabric})
	g.Expect(env.Client.Create(ctx, device(ns))).To(Succeed())
	host(t, ns, "node-1", &bmov1.LLDP{SwitchID: "02:00:00:00:00:01", PortID: "Ethernet1"}, nil)
	g.Eventually(func(g Gomega) { getNIC(g, ns, "node-1") }, timeout).Should(Succeed())

	hand := &netv1.NIC{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "node-1-by-hand"},
		Spec: netv1.NICSpec{Node: "node-1", NetworkDeviceRef: "rack1", NICs: []netv1.HostNIC{{Name: "eno1",
			NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: "leaf1", Port: intstr.FromString("Ethernet42")}}}}},
	}
	g.Expect(env.Client.Create(ctx, hand)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "node-1"}, &netv1.NIC{}))
	}, timeout).Should(BeTrue(), "the generated NIC goes once a person wrote one")
	version := getNIC(g, ns, "node-1-by-hand").ResourceVersion
	g.Consistently(func(g Gomega) {
		g.Expect(getNIC(g, ns, "node-1-by-hand").ResourceVersion).To(Equal(version))
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "node-1"}, &netv1.NIC{}))).To(BeTrue())
	}, 3*time.Second).Should(Succeed(), "the hand-written NIC is never changed, and no generated one comes back")
}

// A host whose LLDP names a switch no NetworkDevice declares gets an event naming the switch id.
func TestAnUnknownSwitchIsReported(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	managertest.Start(t, env, ns, []controller.Group{controller.Fabric})
	g.Expect(env.Client.Create(ctx, device(ns))).To(Succeed())
	host(t, ns, "node-2", &bmov1.LLDP{SwitchID: "0e:00:00:00:00:99", PortID: "1"}, nil)
	g.Eventually(func(g Gomega) {
		evs := &eventsv1.EventList{}
		g.Expect(env.Client.List(ctx, evs, client.InNamespace(ns))).To(Succeed())
		g.Expect(evs.Items).To(ContainElement(And(HaveField("Reason", "UnknownSwitch"), HaveField("Regarding.Name", "node-2"),
			HaveField("Note", ContainSubstring("names switch 0e:00:00:00:00:99")))))
	}, timeout).Should(Succeed())
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "node-2"}, &netv1.NIC{}))).To(BeTrue(), "no NIC without a known switch")
}
