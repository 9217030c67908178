package clusternetwork_test

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
)

// realLeaves are the ways to manage the test's Open vSwitch: one per shipped driver.
var realLeaves = []struct {
	name string
	// leaf returns the NetworkDevice's switch for the fabric, and its credentials Secret (or nil).
	leaf func(t *testing.T, sw *ovstest.Switch, bridge, ns string) (netv1.Switch, *corev1.Secret)
}{
	{"ovsdb", func(t *testing.T, sw *ovstest.Switch, bridge, _ string) (netv1.Switch, *corev1.Secret) {
		host, port, err := net.SplitHostPort(sw.TCPAddr)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := strconv.Atoi(port)
		return netv1.Switch{Name: "leaf1", Address: host, Port: int32(p), NetworkOS: netv1.NetworkOSOpenvSwitch, Bridge: bridge}, nil
	}},
	{"ssh", func(t *testing.T, sw *ovstest.Switch, bridge, ns string) (netv1.Switch, *corev1.Secret) {
		srv := ovstest.StartSSHD(t, map[string]string{"OVS_RUNDIR": sw.Dir})
		return netv1.Switch{Name: "leaf1", Address: srv.Host, Port: int32(srv.Port), NetworkOS: netv1.NetworkOSOpenvSwitchSSH,
			Bridge: bridge, HostKey: srv.HostKey, CredentialsRef: &netv1.SecretReference{Name: "leaf1-login"}}, sshAuthSecret(ns, "leaf1-login", srv.User, srv.ClientKey)
	}},
}

// sshAuthSecret is a switch's login as docs/switch-drivers.md makes it (kubectl create secret
// generic --type=kubernetes.io/ssh-auth): no labels.
func sshAuthSecret(ns, name, user string, key []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Type:       corev1.SecretTypeSSHAuth,
		Data:       map[string][]byte{corev1.BasicAuthUsernameKey: []byte(user), corev1.SSHAuthPrivateKey: key},
	}
}

// The image's manager drives a real Open vSwitch (user space, hosts in network namespaces)
// through each shipped driver: hosts of one cluster reach each other and nobody else, a host that
// leaves reaches nobody, nothing is sent when nothing changed, and deleting the ClusterNetworks
// leaves the switch as it was.
func TestControllersDriveARealOpenvSwitch(t *testing.T) {
	for _, tc := range realLeaves {
		t.Run(tc.name, func(t *testing.T) {
			ovstest.Require(t, "ovs-vswitchd", "ip", "ping")
			g := NewWithT(t)
			ctx := context.Background()
			ns := env.NewNamespace(t)
			f := ovstest.NewFabric(t)
			before := f.Switch.Ports(t)

			// The image's manager with the image's drivers.
			startFabricWith(t, ns, nil)

			leaf, secret := tc.leaf(t, f.Switch, f.Bridge, ns)
			nd := &netv1.NetworkDevice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd1"}, Spec: netv1.NetworkDeviceSpec{Switches: []netv1.Switch{leaf}}}
			create(t, nd)
			if secret != nil { // after the NetworkDevice, as a user who applies a folder may
				create(t, secret)
			}
			for _, h := range []*ovstest.Host{f.H1, f.H2, f.H3} {
				create(t, &netv1.NIC{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nic-" + h.Name},
					Spec: netv1.NICSpec{Node: h.Name, NetworkDeviceRef: "nd1", NICs: []netv1.HostNIC{{
						NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: "leaf1", Port: intstr.FromString(h.Port)}},
						Capability:    netv1.NICCapability{Speed: 1000},
					}}},
				})
			}
			create(t, clusterNetwork(ns, "cn-a", "1001-1001", "control"), clusterNetwork(ns, "cn-b", "1002-1002", "data"))
			g.Eventually(func(g Gomega) {
				g.Expect(getCN(g, ns, "cn-a").Status.Available).To(HaveKey("h1"))
			}, timeout).Should(Succeed())
			selectHost(t, ns, "h1", "cn-a")
			selectHost(t, ns, "h2", "cn-a")
			selectHost(t, ns, "h3", "cn-b")
			for host, cn := range map[string]string{"h1": "cn-a", "h2": "cn-a", "h3": "cn-b"} {
				g.Eventually(func(g Gomega) {
					g.Expect(state(g, ns, cn, host).State).To(Equal(netv1.HostReady), "host %s in %s", host, cn)
				}, timeout).Should(Succeed())
			}
			ports := f.Switch.Ports(t)
			g.Expect(ports[f.H1.Port].Tag).To(Equal(1001))
			g.Expect(ports[f.H2.Port].Tag).To(Equal(1001))
			g.Expect(ports[f.H3.Port].Tag).To(Equal(1002))
			g.Expect(ovstest.Reaches(t, f.H1, f.H2.Addr, 5)).To(BeTrue(), "h1 reaches h2 in the same cluster")
			g.Expect(ovstest.Reaches(t, f.H1, f.H3.Addr, 2)).To(BeFalse(), "h1 reaches h3 of another cluster")

			// Nothing changed: another reconcile sends nothing to the switch.
			versions := f.Switch.PortVersions(t)
			poke(t, ns)
			time.Sleep(3 * time.Second)
			g.Expect(f.Switch.PortVersions(t)).To(Equal(versions), "a reconcile with nothing changed wrote to the switch")

			// h2 leaves: back on the idle VLAN, reaching nobody.
			selectHost(t, ns, "h2", "")
			g.Eventually(func() int { return f.Switch.Ports(t)[f.H2.Port].Tag }, timeout).Should(Equal(ovstest.IdleVLAN))
			g.Expect(ovstest.Reaches(t, f.H2, f.H1.Addr, 2)).To(BeFalse(), "h2 reaches h1 after leaving")
			g.Expect(ovstest.Reaches(t, f.H2, f.H3.Addr, 1)).To(BeFalse(), "h2 reaches h3 after leaving")

			// Deleting the ClusterNetworks leaves the switch as it was before.
			for _, name := range []string{"cn-a", "cn-b"} {
				g.Expect(env.Client.Delete(ctx, &netv1.ClusterNetwork{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})).To(Succeed())
			}
			for _, name := range []string{"cn-a", "cn-b"} {
				g.Eventually(func() bool {
					err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &netv1.ClusterNetwork{})
					return apierrors.IsNotFound(err)
				}, timeout).Should(BeTrue(), "ClusterNetwork %s deleted", name)
			}
			g.Eventually(func() map[string]ovstest.PortRow { return f.Switch.Ports(t) }, timeout).Should(Equal(before))
		})
	}
}

// poke changes an annotation on the NetworkDevice, so its controller reconciles it again.
func poke(t *testing.T, ns string) {
	t.Helper()
	nd := &netv1.NetworkDevice{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "nd1"}, nd); err != nil {
		t.Fatal(err)
	}
	base := nd.DeepCopy()
	if nd.Annotations == nil {
		nd.Annotations = map[string]string{}
	}
	nd.Annotations["test.metalwire.io/poke"] = time.Now().String()
	if err := env.Client.Patch(context.Background(), nd, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
}
