package metal3data_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	networkv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
)

// vlanFromTemplate tags VLAN "storage" with the id ClusterNetwork "prod" assigned its network
// "storage", beside a fixed VLAN 7.
const vlanFromTemplate = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3DataTemplate
metadata: {name: x}
spec:
  networkData:
    links:
      ethernets: [{type: phy, id: eth0, macAddress: {fromHostInterface: eth0}}]
      vlans:
      - {id: mgmt, vlanID: 7, vlanLink: eth0}
      - {id: storage, vlanIDFrom: {clusterNetwork: prod, network: storage}, vlanLink: eth0}
    networks:
      ipv4DHCP: [{id: storage-dhcp, link: storage}]
`

// TestVLANFromClusterNetwork: a VLAN that takes its id from a ClusterNetwork network waits,
// saying which field and network, while the ClusterNetwork or its VLAN is missing, and the
// host's network_data.json carries the id once the fabric controller assigned it.
func TestVLANFromClusterNetwork(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	startManager(t, ns, managerOptions{})
	template(t, ns, "tmpl", specOf(t, vlanFromTemplate))
	host(t, ns, "node-0", nil, nil, "", "eth0=52:54:00:00:00:01")
	machine(t, ns, "m3m-0", "tmpl", machineOpts{host: "node-0"})

	field := "Metal3DataTemplate tmpl spec.networkData.links.vlans[1].vlanIDFrom"
	expectBlocked(t, ns, "m3m-0", infrav1.DataVLANSourceNotFoundReason,
		field+".clusterNetwork: ClusterNetwork prod not found in namespace "+ns, true)

	cn := &networkv1.ClusterNetwork{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prod"},
		Spec: networkv1.ClusterNetworkSpec{
			NetworkDeviceRef: "tor", VLANRange: "100-199",
			Networks: []networkv1.Network{{Name: "provisioning"}},
		},
	}
	g.Expect(env.Client.Create(ctx, cn)).To(Succeed())
	expectBlocked(t, ns, "m3m-0", infrav1.DataVLANSourceNotFoundReason,
		field+".network: ClusterNetwork prod has no network storage; its networks: provisioning", true)

	cn.Spec.Networks = append(cn.Spec.Networks, networkv1.Network{Name: "storage"})
	g.Expect(env.Client.Update(ctx, cn)).To(Succeed())
	expectBlocked(t, ns, "m3m-0", infrav1.DataWaitingForVLANReason,
		field+": ClusterNetwork prod has not assigned network storage a VLAN id yet", false)

	// What the fabric controller writes once it assigned the VLANs.
	cn.Status.Networks = []networkv1.NetworkStatus{{Name: "provisioning", VLANID: 100}, {Name: "storage", VLANID: 101}}
	g.Expect(env.Client.Status().Update(ctx, cn)).To(Succeed())

	data := renderedData(t, ns, "m3m-0")
	secret := getSecret(g, ns, data.Spec.NetworkData.Name)
	var nd struct {
		Links []struct {
			ID     string `json:"id"`
			Type   string `json:"type"`
			VLANID int    `json:"vlan_id"`
		} `json:"links"`
	}
	g.Expect(yaml.Unmarshal(secret.Data["networkData"], &nd)).To(Succeed())
	vlans := map[string]int{}
	for _, l := range nd.Links {
		if l.Type == "vlan" {
			vlans[l.ID] = l.VLANID
		}
	}
	g.Expect(vlans).To(Equal(map[string]int{"mgmt": 7, "storage": 101}), "network data:\n%s", secret.Data["networkData"])
}
