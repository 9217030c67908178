package metal3data_test

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	networkv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
)

// bondedVLANTemplate bonds eth0 and eth1 (active-backup) and tags network storage's VLAN on
// the bond, as the ClusterNetwork assigned it.
const bondedVLANTemplate = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3DataTemplate
metadata: {name: x}
spec:
  networkData:
    links:
      ethernets:
      - {type: phy, id: eth0, macAddress: {fromHostInterface: eth0}}
      - {type: phy, id: eth1, macAddress: {fromHostInterface: eth1}}
      bonds:
      - {id: bond0, bondMode: active-backup, bondLinks: [eth0, eth1]}
      vlans:
      - {id: storage, vlanIDFrom: {clusterNetwork: prod, network: storage}, vlanLink: bond0}
    networks:
      ipv4DHCP: [{id: storage-dhcp, link: storage}]
`

// TestHostSwitchMismatch: rendered network data that tags a VLAN on a bond whose cards the
// fabric put in two access VLANs is reported on the Metal3Data (condition and Warning event),
// naming each card, its port and both sides; once the fabric carries the VLAN on both ports as
// trunks, the condition says they agree, without rendering again.
func TestHostSwitchMismatch(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	startManager(t, ns, managerOptions{})

	cn := &networkv1.ClusterNetwork{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prod"},
		Spec: networkv1.ClusterNetworkSpec{NetworkDeviceRef: "tor", VLANRange: "100-199",
			Networks: []networkv1.Network{{Name: "provisioning"}, {Name: "storage"}}},
	}
	g.Expect(env.Client.Create(ctx, cn)).To(Succeed())
	cn.Status.Networks = []networkv1.NetworkStatus{{Name: "provisioning", VLANID: 100}, {Name: "storage", VLANID: 101}}
	g.Expect(env.Client.Status().Update(ctx, cn)).To(Succeed())

	nic := &networkv1.NIC{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "node-0"},
		Spec: networkv1.NICSpec{Node: "node-0", NetworkDeviceRef: "tor", NICs: []networkv1.HostNIC{
			{Name: "eth0", MAC: "52:54:00:00:00:01", NetworkDevice: networkv1.NICNetworkDevice{Switch: networkv1.SwitchPortRef{Name: "leaf1", Port: intstr.FromString("Ethernet1")}}},
			{Name: "eth1", MAC: "52:54:00:00:00:02", NetworkDevice: networkv1.NICNetworkDevice{Switch: networkv1.SwitchPortRef{Name: "leaf1", Port: intstr.FromString("Ethernet2")}}},
		}},
	}
	g.Expect(env.Client.Create(ctx, nic)).To(Succeed())
	nic.Status = networkv1.NICStatus{ClusterNetwork: "prod", NICs: []*networkv1.NICAssignment{
		{Network: "provisioning", VLANID: 100, PortMode: networkv1.PortModeAccess},
		{Network: "storage", VLANID: 101, PortMode: networkv1.PortModeAccess},
	}}
	g.Expect(env.Client.Status().Update(ctx, nic)).To(Succeed())

	template(t, ns, "tmpl", specOf(t, bondedVLANTemplate))
	host(t, ns, "node-0", nil, nil, "", "eth0=52:54:00:00:00:01", "eth1=52:54:00:00:00:02")
	machine(t, ns, "m3m-0", "tmpl", machineOpts{host: "node-0"})
	data := renderedData(t, ns, "m3m-0")

	mismatch := func(g Gomega) metav1.Condition {
		d := getData(g, ns, data.Name)
		c := condition(d.Status.Conditions, infrav1.DataHostSwitchMismatchCondition)
		g.Expect(c.Type).NotTo(BeEmpty(), "no %s condition: %+v", infrav1.DataHostSwitchMismatchCondition, d.Status.Conditions)
		return c
	}
	wants := []string{
		"card eth0 (52:54:00:00:00:01) on switch port leaf1 Ethernet1: the host sends VLAN 101 tagged, but the switch port is an access port in VLAN 100 and drops tagged frames",
		"card eth0 (52:54:00:00:00:01) on switch port leaf1 Ethernet1: the host bonds it with bond0's other member eth1 (52:54:00:00:00:02) (switch port leaf1 Ethernet2), but the switch port carries access VLAN 100 while the other port carries access VLAN 101",
		"card eth1 (52:54:00:00:00:02) on switch port leaf1 Ethernet2: the host sends VLAN 101 tagged, but the switch port is an access port in VLAN 101",
	}
	g.Eventually(func(g Gomega) {
		c := mismatch(g)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Reason).To(Equal(infrav1.DataHostSwitchMismatchReason))
		for _, w := range wants {
			g.Expect(c.Message).To(ContainSubstring(w))
		}
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		evs := &eventsv1.EventList{}
		g.Expect(env.Client.List(ctx, evs, client.InNamespace(ns))).To(Succeed())
		var got []string
		for _, e := range evs.Items {
			if e.Regarding.Name == data.Name && e.Reason == infrav1.DataHostSwitchMismatchReason && e.Type == "Warning" {
				got = append(got, e.Note)
			}
		}
		g.Expect(strings.Join(got, "\n")).To(ContainSubstring("the network data of host node-0 disagrees with its switch ports: " + wants[0] + " (and 3 more: see condition HostSwitchMismatch)"))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	// The fabric now trunks both VLANs on both ports: the rendered data agrees, as it is.
	nic.Status.NICs = []*networkv1.NICAssignment{
		{Network: "provisioning", VLANID: 100, PortMode: networkv1.PortModeTrunk, Networks: []networkv1.NetworkStatus{{Name: "provisioning", VLANID: 100}, {Name: "storage", VLANID: 101}}},
		{Network: "provisioning", VLANID: 100, PortMode: networkv1.PortModeTrunk, Networks: []networkv1.NetworkStatus{{Name: "provisioning", VLANID: 100}, {Name: "storage", VLANID: 101}}},
	}
	g.Expect(env.Client.Status().Update(ctx, nic)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := mismatch(g)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse), "message: %s", c.Message)
		g.Expect(c.Reason).To(Equal(infrav1.DataHostSwitchAgreeReason))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(getData(g, ns, data.Name).Spec.NetworkData).To(Equal(data.Spec.NetworkData), "checked, not rendered again")
}
