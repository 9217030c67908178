package clusternetwork_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/switchdriver"
	"github.com/metalwire/metalwire/internal/switchdriver/openvswitchssh"
	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
)

// An SSH switch whose host key is not the pinned one (changed), or when none is pinned
// (unknown), is not logged in to: HostKeyTrusted=False shows the fingerprint it saw, the hosts
// on it are in error with that message, and pinning the right key brings them to ready.
func TestUntrustedSSHHostKey(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	sw := ovstest.StartSwitch(t, ovstest.Options{})
	br := sw.AddBridge(t, "br0")
	sw.AddPorts(t, br, ovstest.IdleVLAN, "eth1")
	srv := ovstest.StartSSHD(t, map[string]string{"OVS_RUNDIR": sw.Dir})
	shown, _, _, _, err := ssh.ParseAuthorizedKey([]byte(srv.HostKey))
	g.Expect(err).NotTo(HaveOccurred())
	fingerprint := ssh.FingerprintSHA256(shown)
	otherKey, _ := ovstest.NewSSHKey(t)

	reg := &switchdriver.Registry{}
	reg.Register(openvswitchssh.New())
	startFabricWith(t, ns, reg)
	create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "leaf1-login"},
		Type:       corev1.SecretTypeBasicAuth,
		StringData: map[string]string{corev1.BasicAuthUsernameKey: srv.User, corev1.BasicAuthPasswordKey: srv.Password},
	}, &netv1.NetworkDevice{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd1"},
		Spec: netv1.NetworkDeviceSpec{Switches: []netv1.Switch{{
			Name: "leaf1", Address: srv.Host, Port: int32(srv.Port), NetworkOS: netv1.NetworkOSOpenvSwitchSSH, Bridge: br,
			HostKey: otherKey, CredentialsRef: &netv1.SecretReference{Name: "leaf1-login"},
		}}},
	}, &netv1.NIC{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nic-h1"},
		Spec: netv1.NICSpec{Node: "h1", NetworkDeviceRef: "nd1", NICs: []netv1.HostNIC{{
			NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: "leaf1", Port: intstr.FromString("eth1")}},
			Capability:    netv1.NICCapability{Speed: 1000},
		}}},
	}, clusterNetwork(ns, "cn1", "1001-1001", "control"))
	g.Eventually(func(g Gomega) {
		g.Expect(getCN(g, ns, "cn1").Status.Available).To(HaveKey("h1"))
	}, timeout).Should(Succeed())
	selectHost(t, ns, "h1", "cn1")

	expectRefused := func(why string) {
		t.Helper()
		g.Eventually(func(g Gomega) {
			nd := &netv1.NetworkDevice{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nd1"}, nd)).To(Succeed())
			cond := condition(nd.Status.Conditions, netv1.ConditionHostKeyTrusted)
			g.Expect(cond).To(HavePrefix("False "+netv1.ReasonHostKeyUnknown), why)
			g.Expect(cond).To(ContainSubstring(fingerprint), "the condition shows the fingerprint the switch showed")
			g.Expect(cond).To(ContainSubstring(why))
			st := state(g, ns, "cn1", "h1")
			g.Expect(st.State).To(Equal(netv1.HostError))
			g.Expect(st.Message).To(ContainSubstring(fingerprint))
			g.Expect(st.Message).To(ContainSubstring(why))
		}, timeout).Should(Succeed())
		g.Expect(sw.Ports(t)["eth1"].Tag).To(Equal(ovstest.IdleVLAN), "nothing was sent to a switch whose key is not trusted")
	}
	setHostKey := func(key string) {
		t.Helper()
		nd := &netv1.NetworkDevice{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nd1"}, nd)).To(Succeed())
		base := nd.DeepCopy()
		nd.Spec.Switches[0].HostKey = key
		g.Expect(env.Client.Patch(ctx, nd, client.MergeFrom(base))).To(Succeed())
	}

	expectRefused("does not match the pinned hostKey") // changed
	setHostKey("")
	expectRefused("no SSH host key is pinned") // unknown
	setHostKey(srv.HostKey)
	g.Eventually(func(g Gomega) {
		g.Expect(state(g, ns, "cn1", "h1").State).To(Equal(netv1.HostReady))
		nd := &netv1.NetworkDevice{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nd1"}, nd)).To(Succeed())
		g.Expect(condition(nd.Status.Conditions, netv1.ConditionHostKeyTrusted)).To(HavePrefix("True"))
	}, timeout).Should(Succeed())
	g.Expect(sw.Ports(t)["eth1"].Tag).To(Equal(1001))
}
