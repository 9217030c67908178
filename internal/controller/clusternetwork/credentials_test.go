package clusternetwork_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/manager"
	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
)

// A switch's credentials Secret, made as the docs show (no labels), is read by the image's
// manager, and a Secret created after its NetworkDevice, rotated to a key the switch refuses and
// rotated again to one it accepts is acted on within seconds each time: the retries after a
// failure are set ten minutes apart here, so only the Secret's own watch can explain it.
func TestSwitchCredentialsFollowTheirSecret(t *testing.T) {
	ovstest.Require(t, "ovs-vswitchd", "sshd")
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	sw, br := leafSwitch(t, "p-h1")
	srv := ovstest.StartSSHD(t, map[string]string{"OVS_RUNDIR": sw.Dir})

	startFabricWith(t, ns, nil, func(o *manager.Options) {
		o.SwitchRetryMin, o.SwitchRetryMax = 10*time.Minute, 10*time.Minute
	})
	create(t, &netv1.NetworkDevice{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd1"},
		Spec: netv1.NetworkDeviceSpec{Switches: []netv1.Switch{{
			Name: "leaf1", Address: srv.Host, Port: int32(srv.Port), NetworkOS: netv1.NetworkOSOpenvSwitchSSH,
			Bridge: br, HostKey: srv.HostKey, CredentialsRef: &netv1.SecretReference{Name: "leaf1-login"},
		}}},
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

	reachable := func(g Gomega) *metav1.Condition {
		nd := &netv1.NetworkDevice{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nd1"}, nd)).To(Succeed())
		for i := range nd.Status.Conditions {
			if nd.Status.Conditions[i].Type == netv1.ConditionReachable {
				return &nd.Status.Conditions[i]
			}
		}
		return nil
	}
	g.Eventually(func(g Gomega) {
		c := reachable(g)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Message).To(ContainSubstring(`credentialsRef: reading Secret leaf1-login`))
		g.Expect(c.Message).To(ContainSubstring("not found"))
	}, timeout).Should(Succeed(), "no Secret yet: the switch cannot be reached, and the condition says why")

	secret := sshAuthSecret(ns, "leaf1-login", srv.User, srv.ClientKey)
	create(t, secret)
	within := 15 * time.Second // seconds, not the ten minutes of the next retry
	g.Eventually(func(g Gomega) {
		g.Expect(reachable(g).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(state(g, ns, "cn-a", "h1").State).To(Equal(netv1.HostReady))
	}, within).Should(Succeed(), "the Secret created after the NetworkDevice is used at once")
	g.Expect(sw.Ports(t)["p-h1"].Tag).To(Equal(1001))

	rotate := func(key []byte) {
		t.Helper()
		cur := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(secret), cur)).To(Succeed())
		base := cur.DeepCopy()
		cur.Data[corev1.SSHAuthPrivateKey] = key
		g.Expect(env.Client.Patch(ctx, cur, client.MergeFrom(base))).To(Succeed())
	}
	_, unknownKey := ovstest.NewSSHKey(t)
	rotate(unknownKey)
	g.Eventually(func(g Gomega) {
		c := reachable(g)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Message).To(ContainSubstring("refused"))
		g.Expect(c.Message).NotTo(ContainSubstring("PRIVATE KEY"), "no secret in a condition")
	}, within).Should(Succeed(), "a Secret rotated to a key the switch does not know is used at once")

	newPub, newKey := ovstest.NewSSHKey(t)
	srv.AuthorizeKey(t, newPub)
	rotate(newKey)
	g.Eventually(func(g Gomega) {
		g.Expect(reachable(g).Status).To(Equal(metav1.ConditionTrue))
	}, within).Should(Succeed(), "a Secret rotated to a key the switch accepts is used at once")
}
