package clusternetwork_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
)

// baremetal-operator's BareMetalSwitch used as a switch: deviceType netmiko_ovs_linux is driven
// as openvswitch-ssh at its address and port with its credentials Secret (BMO's keys, type
// Opaque); a deviceType metalwire cannot drive is reported with the ones it can.
func TestABareMetalSwitchAsASwitch(t *testing.T) {
	ovstest.Require(t, "ovs-vswitchd", "sshd")
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	sw, br := leafSwitch(t, "p-h1")
	srv := ovstest.StartSSHD(t, map[string]string{"OVS_RUNDIR": sw.Dir})
	startFabricWith(t, ns, nil)

	create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tor1-login"},
		Data:       map[string][]byte{"username": []byte(srv.User), "ssh-privatekey": srv.ClientKey},
	}, &bmov1.BareMetalSwitch{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tor1"},
		Spec: bmov1.BareMetalSwitchSpec{Address: srv.Host, Port: ptr.To(int32(srv.Port)), MACAddress: "02:00:5e:00:53:03",
			Driver: "generic-switch", DeviceType: "netmiko_ovs_linux",
			Credentials: bmov1.SwitchCredentials{Type: "publickey", SecretName: "tor1-login"}},
	}, &bmov1.BareMetalSwitch{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tor2"},
		Spec: bmov1.BareMetalSwitchSpec{Address: "192.0.2.7", MACAddress: "02:00:5e:00:53:04", Driver: "generic-switch",
			DeviceType: "netmiko_hp_comware", Credentials: bmov1.SwitchCredentials{Type: "password", SecretName: "tor2-login"}},
	}, &netv1.NetworkDevice{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd1"},
		Spec: netv1.NetworkDeviceSpec{Switches: []netv1.Switch{{
			Name: "leaf1", BareMetalSwitchRef: &netv1.LocalObjectReference{Name: "tor1"}, Bridge: br, HostKey: srv.HostKey,
		}}},
	}, &netv1.NetworkDevice{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd2"},
		Spec:       netv1.NetworkDeviceSpec{Switches: []netv1.Switch{{Name: "leaf2", BareMetalSwitchRef: &netv1.LocalObjectReference{Name: "tor2"}}}},
	}, &netv1.NIC{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nic-h1"},
		Spec: netv1.NICSpec{Node: "h1", NetworkDeviceRef: "nd1", NICs: []netv1.HostNIC{{
			NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: "leaf1", Port: intstr.FromString("p-h1")}},
			Capability:    netv1.NICCapability{Speed: 1000},
		}}},
	}, clusterNetwork(ns, "cn-a", "1001-1001", "control"))
	g.Eventually(func(g Gomega) {
		g.Expect(getCN(g, ns, "cn-a").Status.Available).To(HaveKey("h1"))
	}, timeout).Should(Succeed())
	selectHost(t, ns, "h1", "cn-a")
	g.Eventually(func() int { return sw.Ports(t)["p-h1"].Tag }, timeout).Should(Equal(1001), "the BareMetalSwitch's switch is configured over SSH")

	g.Eventually(func(g Gomega) {
		nd := &netv1.NetworkDevice{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nd2"}, nd)).To(Succeed())
		g.Expect(nd.Status.Conditions).To(ContainElement(And(HaveField("Type", netv1.ConditionReachable), HaveField("Status", metav1.ConditionFalse),
			HaveField("Message", And(ContainSubstring(`BareMetalSwitch tor2: deviceType "netmiko_hp_comware" is not one metalwire can drive; supported: `),
				ContainSubstring("netmiko_arista_eos"))))))
	}, timeout).Should(Succeed())
}
