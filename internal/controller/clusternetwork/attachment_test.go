package clusternetwork_test

import (
	"context"
	"net"
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
)

// baremetal-operator's HostNetworkAttachment, applied with no Ironic: a claimed host's
// interface naming a trunk attachment (native VLAN, an allowed range) gets it on its real Open
// vSwitch port, read back as set; released, the port goes back to idle; a ClusterNetwork that
// speaks for the same port wins, and the NetworkDevice's condition says so.
func TestAHostNetworkAttachmentOnARealOpenvSwitch(t *testing.T) {
	for _, driver := range []string{"ovsdb", "ssh"} {
		t.Run(driver, func(t *testing.T) { hostNetworkAttachmentOnOVS(t, driver) })
	}
}

func hostNetworkAttachmentOnOVS(t *testing.T, driver string) {
	ovstest.Require(t, "ovs-vswitchd", "sshd")
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	sw, br := leafSwitch(t, "p-h1")
	startFabricWith(t, ns, nil)

	const switchMAC = "02:00:5e:00:53:02"
	leaf := netv1.Switch{Name: "leaf1", Bridge: br, MACAddress: switchMAC}
	switch driver {
	case "ovsdb":
		host, port, err := net.SplitHostPort(sw.TCPAddr)
		g.Expect(err).NotTo(HaveOccurred())
		p, _ := strconv.Atoi(port)
		leaf.Address, leaf.Port, leaf.NetworkOS = host, int32(p), netv1.NetworkOSOpenvSwitch
	case "ssh":
		srv := ovstest.StartSSHD(t, map[string]string{"OVS_RUNDIR": sw.Dir})
		create(t, sshAuthSecret(ns, "leaf1-login", srv.User, srv.ClientKey))
		leaf.Address, leaf.Port, leaf.NetworkOS = srv.Host, int32(srv.Port), netv1.NetworkOSOpenvSwitchSSH
		leaf.HostKey, leaf.CredentialsRef = srv.HostKey, &netv1.SecretReference{Name: "leaf1-login"}
	}
	create(t, &netv1.NetworkDevice{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd1"},
		Spec:       netv1.NetworkDeviceSpec{Switches: []netv1.Switch{leaf}},
	}, &bmov1.HostNetworkAttachment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data"},
		Spec: bmov1.HostNetworkAttachmentSpec{Mode: bmov1.SwitchPortModeTrunk, NativeVLAN: 10, AllowedVLANs: []string{"100-102", "200"},
			MTU: ptr.To(9000)},
	})
	bmh := &bmov1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "h1"}, Spec: bmov1.BareMetalHostSpec{
		NetworkInterfaces: []bmov1.NetworkInterface{{Name: "eth0", HostNetworkAttachment: bmov1.HostNetworkAttachmentRef{Name: "data"}}},
	}}
	create(t, bmh)
	base := bmh.DeepCopy()
	bmh.Status.HardwareDetails = &bmov1.HardwareDetails{NIC: []bmov1.NIC{{Name: "eth0", MAC: "aa:00:00:00:00:21", SpeedGbps: 1,
		LLDP: &bmov1.LLDP{SwitchID: switchMAC, PortID: "p-h1"}}}}
	g.Expect(env.Client.Status().Patch(ctx, bmh, client.MergeFrom(base))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "h1"}, &netv1.NIC{})).To(Succeed())
	}, timeout).Should(Succeed())
	g.Consistently(func() int { return sw.Ports(t)["p-h1"].Tag }, "2s").Should(Equal(ovstest.IdleVLAN), "a host no cluster claimed keeps its idle port")

	claim := func(by string) {
		t.Helper()
		cur := &bmov1.BareMetalHost{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(bmh), cur)).To(Succeed())
		base := cur.DeepCopy()
		cur.Spec.ConsumerRef = nil
		if by != "" {
			cur.Spec.ConsumerRef = &corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta2", Kind: "Metal3Machine", Namespace: ns, Name: by}
		}
		g.Expect(env.Client.Patch(ctx, cur, client.MergeFrom(base))).To(Succeed())
	}
	claim("worker-0")
	g.Eventually(func(g Gomega) {
		row := sw.Ports(t)["p-h1"]
		g.Expect(row.VLANMode).To(Equal("native-untagged"))
		g.Expect(row.Tag).To(Equal(10))
		g.Expect(row.Trunks).To(Equal([]int{100, 101, 102, 200}))
		g.Expect(sw.MTURequest(t, "p-h1")).To(Equal(9000))
	}, timeout).Should(Succeed(), "the claimed host's port carries the attachment: native 10 untagged, 100-102 and 200 tagged, MTU 9000")
	cond := func(g Gomega) metav1.Condition {
		nd := &netv1.NetworkDevice{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nd1"}, nd)).To(Succeed())
		for _, c := range nd.Status.Conditions {
			if c.Type == netv1.ConditionAttachmentsApplied {
				return c
			}
		}
		return metav1.Condition{}
	}
	g.Eventually(func(g Gomega) { g.Expect(cond(g).Status).To(Equal(metav1.ConditionTrue)) }, timeout).Should(Succeed())

	claim("")
	g.Eventually(func(g Gomega) {
		row := sw.Ports(t)["p-h1"]
		g.Expect(row.Tag).To(Equal(ovstest.IdleVLAN))
		g.Expect(row.Trunks).To(BeEmpty())
		g.Expect(sw.MTURequest(t, "p-h1")).To(BeZero())
	}, timeout).Should(Succeed(), "released, the port goes back to idle, its MTU the switch's own")

	// A ClusterNetwork speaking for the same port wins, and the condition says so.
	claim("worker-0")
	create(t, clusterNetwork(ns, "cn-a", "1001-1001", "control"))
	g.Eventually(func(g Gomega) {
		g.Expect(getCN(g, ns, "cn-a").Status.Available).To(HaveKey("h1"))
	}, timeout).Should(Succeed())
	nic := &netv1.NIC{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "h1"}, nic)).To(Succeed())
	nbase := nic.DeepCopy()
	nic.Labels[netv1.SelectedForLabel] = "cn-a"
	g.Expect(env.Client.Patch(ctx, nic, client.MergeFrom(nbase))).To(Succeed())
	g.Eventually(func(g Gomega) {
		row := sw.Ports(t)["p-h1"]
		g.Expect(row.Tag).To(Equal(1001))
		g.Expect(row.Trunks).To(BeEmpty())
		c := cond(g)
		g.Expect(c.Reason).To(Equal(netv1.ReasonClusterNetworkWins))
		g.Expect(c.Message).To(ContainSubstring("host h1 interface eth0: ClusterNetwork cn-a speaks for port leaf1/p-h1, so HostNetworkAttachment data is not applied there"))
	}, timeout).Should(Succeed())
}
