package metal3data_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	networkv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
)

// bondFromTemplate bonds the cards ClusterNetwork "prod" bonded for its network "control".
const bondFromTemplate = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3DataTemplate
metadata: {name: x}
spec:
  networkData:
    links:
      bonds:
      - {id: bond0, bondFrom: {clusterNetwork: prod, network: control}}
    networks:
      ipv4DHCP: [{id: control-dhcp, link: bond0}]
`

// TestBondFromClusterNetwork: a bond that takes its members from a ClusterNetwork network waits,
// naming the field, while the ClusterNetwork, its network or the host's bonded cards are
// missing, and the host's network_data.json has an 802.3ad bond over exactly the cards the
// fabric bonded, by MAC, once it has.
func TestBondFromClusterNetwork(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	startManager(t, ns, managerOptions{})
	template(t, ns, "tmpl", specOf(t, bondFromTemplate))
	host(t, ns, "node-0", nil, nil, "", "eno1=52:54:00:00:00:01", "eno2=52:54:00:00:00:02", "eno3=52:54:00:00:00:03")
	machine(t, ns, "m3m-0", "tmpl", machineOpts{host: "node-0"})

	field := "Metal3DataTemplate tmpl spec.networkData.links.bonds[0].bondFrom"
	expectBlocked(t, ns, "m3m-0", infrav1.DataBondSourceNotFoundReason,
		field+".clusterNetwork: ClusterNetwork prod not found in namespace "+ns, true)

	cn := &networkv1.ClusterNetwork{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prod"},
		Spec:       networkv1.ClusterNetworkSpec{NetworkDeviceRef: "tor", VLANRange: "100-199", Networks: []networkv1.Network{{Name: "control"}}},
	}
	g.Expect(env.Client.Create(ctx, cn)).To(Succeed())
	expectBlocked(t, ns, "m3m-0", infrav1.DataBondSourceNotFoundReason,
		field+".network: network control of ClusterNetwork prod has linkAggregation 1, so the switch bonds nothing", true)

	cn.Spec.Networks[0].LinkAggregation = 2
	cn.Spec.Networks[0].LAG = &networkv1.LAG{Mode: networkv1.LAGLACP, LACPRate: networkv1.LACPFast}
	g.Expect(env.Client.Update(ctx, cn)).To(Succeed())
	expectBlocked(t, ns, "m3m-0", infrav1.DataWaitingForBondReason,
		field+": ClusterNetwork prod has not bonded host node-0's cards for network control yet", false)

	// The host's NIC object, and the status the fabric controller writes once it bonded the
	// cards eno3 and eno1 (eno2 carries nothing).
	card := func(mac, port string) networkv1.HostNIC {
		return networkv1.HostNIC{MAC: mac, NetworkDevice: networkv1.NICNetworkDevice{Switch: networkv1.SwitchPortRef{Name: "leaf1", Port: intstr.FromString(port)}}}
	}
	nic := &networkv1.NIC{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nic-node-0"}, Spec: networkv1.NICSpec{Node: "node-0", NetworkDeviceRef: "tor",
		NICs: []networkv1.HostNIC{card("52:54:00:00:00:03", "eth3"), card("52:54:00:00:00:02", "eth2"), card("52:54:00:00:00:01", "eth1")}}}
	g.Expect(env.Client.Create(ctx, nic)).To(Succeed())
	lag := &networkv1.CardLAG{Name: "lag0123456789", Mode: networkv1.LAGLACP, LACPRate: networkv1.LACPFast}
	nic.Status = networkv1.NICStatus{ClusterNetwork: "prod", NICs: []*networkv1.NICAssignment{
		{Network: "control", VLANID: 100, LAG: lag}, nil, {Network: "control", VLANID: 100, LAG: lag},
	}}
	g.Expect(env.Client.Status().Update(ctx, nic)).To(Succeed())

	data := renderedData(t, ns, "m3m-0")
	secret := getSecret(g, ns, data.Spec.NetworkData.Name)
	var nd struct {
		Links []map[string]any `json:"links"`
	}
	g.Expect(yaml.Unmarshal(secret.Data["networkData"], &nd)).To(Succeed())
	g.Expect(nd.Links).To(ContainElement(And(HaveKeyWithValue("id", "bond0"), HaveKeyWithValue("bond_mode", "802.3ad"),
		HaveKeyWithValue("bond_lacp_rate", "fast"), HaveKeyWithValue("bond_links", []any{"bond0-0", "bond0-1"}))), "network data:\n%s", secret.Data["networkData"])
	g.Expect(nd.Links).To(ContainElement(And(HaveKeyWithValue("id", "bond0-0"), HaveKeyWithValue("ethernet_mac_address", "52:54:00:00:00:03"))))
	g.Expect(nd.Links).To(ContainElement(And(HaveKeyWithValue("id", "bond0-1"), HaveKeyWithValue("ethernet_mac_address", "52:54:00:00:00:01"))))
	g.Expect(nd.Links).To(HaveLen(3), "the bond and its two cards, nothing of eno2")

	// The host's LACP bond and the switch's LACP LAG agree.
	g.Eventually(func(g Gomega) {
		c := meta.FindStatusCondition(getData(g, ns, data.Name).Status.Conditions, infrav1.DataHostSwitchMismatchCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse), c.Message)
	}, timeout).Should(Succeed())
	// A static LAG on the switch under the host's LACP bond is a mismatch.
	nic.Status.NICs[0].LAG.Mode, nic.Status.NICs[2].LAG.Mode = networkv1.LAGStatic, networkv1.LAGStatic
	g.Expect(env.Client.Status().Update(ctx, nic)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := meta.FindStatusCondition(getData(g, ns, data.Name).Status.Conditions, infrav1.DataHostSwitchMismatchCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Message).To(ContainSubstring("is in static LAG lag0123456789, which does not answer LACP"))
	}, timeout).Should(Succeed())
}
