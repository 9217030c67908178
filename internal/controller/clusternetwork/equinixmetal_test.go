package clusternetwork_test

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/manager"
	"github.com/metalwire/metalwire/internal/switchdriver"
	"github.com/metalwire/metalwire/internal/switchdriver/equinixmetal"
	"github.com/metalwire/metalwire/internal/switchdriver/equinixmetal/metalfake"
)

const metalToken = "metal-token-7f3a-never-in-a-condition"

// metalFabric is a fake Metal project in metro da with VXLAN 1001 and 1002 and one device per
// host, a NetworkDevice whose switch is the project, a NIC per host cabled to <device>/eth1 and
// a ClusterNetwork of one trunk network pinned to VXLAN vlan.
func metalFabric(t *testing.T, ns string, token string, vlan int32, hosts ...string) (*metalfake.API, map[string]string) {
	t.Helper()
	api := metalfake.New(t, metalToken)
	api.AddVXLAN(1001, "da")
	api.AddVXLAN(1002, "da")
	devices := map[string]string{}
	create(t,
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "metal-token"}, Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{"token": []byte(token)}},
		&netv1.NetworkDevice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd1"}, Spec: netv1.NetworkDeviceSpec{Switches: []netv1.Switch{{
			Name: "metal", Address: api.URL, NetworkOS: netv1.NetworkOSEquinixMetal,
			EquinixMetal:   &netv1.EquinixMetalProject{ProjectID: api.Project, Metro: "da"},
			CredentialsRef: &netv1.SecretReference{Name: "metal-token"},
		}}}})
	for _, h := range hosts {
		devices[h] = api.AddDevice(h, "da")
		create(t, &netv1.NIC{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nic-" + h}, Spec: netv1.NICSpec{
			Node: h, NetworkDeviceRef: "nd1", NICs: []netv1.HostNIC{{
				NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: "metal", Port: intstr.FromString(devices[h] + "/eth1")}},
				Capability:    netv1.NICCapability{Speed: 1000},
			}},
		}})
	}
	cn := clusterNetwork(ns, "cn-a", "1000-1999", "storage")
	cn.Spec.Networks[0].PortMode = netv1.PortModeTrunk
	cn.Spec.Networks[0].VLANID = ptr.To(vlan)
	create(t, cn)
	return api, devices
}

func fabricWithMetal() *switchdriver.Registry {
	reg := &switchdriver.Registry{}
	reg.Register(&equinixmetal.Driver{PollInterval: 5 * time.Millisecond})
	return reg
}

func reachableCondition(g Gomega, ns string) metav1.Condition {
	nd := &netv1.NetworkDevice{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "nd1"}, nd)).To(Succeed())
	for _, c := range nd.Status.Conditions {
		if c.Type == netv1.ConditionReachable {
			return c
		}
	}
	return metav1.Condition{}
}

// The image's manager puts a selected host's eth1 in hybrid mode carrying the network's VXLAN,
// and takes it back to layer3 when the host leaves.
func TestManagerDrivesEquinixMetalHybridAndBack(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	startFabricWith(t, ns, fabricWithMetal())
	api, devices := metalFabric(t, ns, metalToken, 1001, "h1")
	g.Eventually(func(g Gomega) { g.Expect(getCN(g, ns, "cn-a").Status.Available).To(HaveKey("h1")) }, timeout).Should(Succeed())
	selectHost(t, ns, "h1", "cn-a")
	g.Eventually(func(g Gomega) {
		g.Expect(state(g, ns, "cn-a", "h1").State).To(Equal(netv1.HostReady))
		typ, vlans, _ := api.DeviceState(devices["h1"])
		g.Expect(typ).To(Equal("hybrid"))
		g.Expect(vlans).To(Equal(map[string][]int{"eth1": {1001}}))
	}, timeout).Should(Succeed())
	g.Expect(reachableCondition(g, ns).Status).To(Equal(metav1.ConditionTrue))

	selectHost(t, ns, "h1", "")
	g.Eventually(func(g Gomega) {
		typ, vlans, _ := api.DeviceState(devices["h1"])
		g.Expect(typ).To(Equal("layer3"))
		g.Expect(vlans).To(BeEmpty())
	}, timeout).Should(Succeed(), "the host left: its device goes back to layer3")
}

// A VXLAN the project lacks in the metro and a refused token each show in the NetworkDevice's
// Reachable condition, saying what to do, never with the token.
func TestEquinixMetalErrorsAreConditions(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	startFabricWith(t, ns, fabricWithMetal())
	_, _ = metalFabric(t, ns, metalToken, 1500, "h1")
	g.Eventually(func(g Gomega) { g.Expect(getCN(g, ns, "cn-a").Status.Available).To(HaveKey("h1")) }, timeout).Should(Succeed())
	selectHost(t, ns, "h1", "cn-a")
	g.Eventually(func(g Gomega) {
		c := reachableCondition(g, ns)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Message).To(ContainSubstring("VLAN 1500 is not a virtual network (VXLAN) of project"))
		g.Expect(c.Message).To(ContainSubstring("create it in the project"))
	}, timeout).Should(Succeed())

	secret := &corev1.Secret{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "metal-token"}, secret)).To(Succeed())
	secret.Data["token"] = []byte("revoked-" + metalToken)
	g.Expect(env.Client.Update(context.Background(), secret)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := reachableCondition(g, ns)
		g.Expect(c.Message).To(ContainSubstring("refused the token"))
		g.Expect(c.Message).To(ContainSubstring("Invalid authentication token"))
		g.Expect(strings.Contains(c.Message, metalToken)).To(BeFalse(), "the condition carries the token")
	}, timeout).Should(Succeed())
}

// A manager stopped while it follows a VLAN batch leaves the batch running; the next manager
// finds it, follows it to the end and sends no second batch.
func TestEquinixMetalManagerRestartedMidBatch(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	api, devices := metalFabric(t, ns, metalToken, 1002, "h1")
	api.Hold(true)
	t.Run("first manager, stopped mid-batch", func(t *testing.T) {
		g := NewWithT(t)
		startFabricWith(t, ns, fabricWithMetal())
		g.Eventually(func(g Gomega) { g.Expect(getCN(g, ns, "cn-a").Status.Available).To(HaveKey("h1")) }, timeout).Should(Succeed())
		selectHost(t, ns, "h1", "cn-a")
		g.Eventually(api.BatchesCreated, timeout).Should(Equal(1))
	})
	api.Hold(false)
	startFabricWith(t, ns, fabricWithMetal())
	g.Eventually(func(g Gomega) {
		g.Expect(state(g, ns, "cn-a", "h1").State).To(Equal(netv1.HostReady))
		typ, vlans, _ := api.DeviceState(devices["h1"])
		g.Expect(typ).To(Equal("hybrid"))
		g.Expect(vlans).To(Equal(map[string][]int{"eth1": {1002}}))
	}, timeout).Should(Succeed())
	g.Expect(api.BatchesCreated()).To(Equal(1), "the second manager followed the first one's batch: calls %q", api.Calls())
}

func hostsCondition(g Gomega, ns string) metav1.Condition {
	nd := &netv1.NetworkDevice{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "nd1"}, nd)).To(Succeed())
	for _, c := range nd.Status.Conditions {
		if c.Type == netv1.ConditionHostsNetworkConfigured {
			return c
		}
	}
	return metav1.Condition{}
}

// The NetworkDevice follows the devices' events once their ports are configured: no report yet,
// the VLAN user-data's running, a host's failure with its message and what to do, then every
// host's success; a host that succeeded is not asked again.
func TestEquinixMetalHostsReportTheirNetworkInACondition(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	startFabricWith(t, ns, fabricWithMetal(), func(o *manager.Options) { o.HostReportInterval = 100 * time.Millisecond })
	api, devices := metalFabric(t, ns, metalToken, 1001, "h1", "h2")
	g.Eventually(func(g Gomega) { g.Expect(getCN(g, ns, "cn-a").Status.Available).To(HaveKey("h2")) }, timeout).Should(Succeed())
	selectHost(t, ns, "h1", "cn-a")
	selectHost(t, ns, "h2", "cn-a")
	g.Eventually(func(g Gomega) {
		c := hostsCondition(g, ns)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(netv1.ReasonHostsNetworkConfiguring))
		g.Expect(c.Message).To(ContainSubstring("host behind port " + devices["h1"] + "/eth1 (switch metal): no report yet"))
	}, timeout).Should(Succeed())

	api.AddEvent(devices["h1"], "user.running", "running", "Configuring Network")
	g.Eventually(func(g Gomega) {
		g.Expect(hostsCondition(g, ns).Message).To(ContainSubstring("host " + devices["h1"] + " (switch metal): Configuring Network"))
	}, timeout).Should(Succeed())

	api.AddEvent(devices["h1"], "user.succeeded", "succeeded", "Network configuration successful")
	api.AddEvent(devices["h2"], "network_configuration_failed", "", "Network configuration failed: eth1.1001")
	g.Eventually(func(g Gomega) {
		c := hostsCondition(g, ns)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(netv1.ReasonHostsNetworkFailed))
		g.Expect(c.Message).To(HavePrefix("host " + devices["h2"] + " (switch metal): Network configuration failed: eth1.1001; the host's OS did not configure its VLANs"))
		g.Expect(c.Message).To(ContainSubstring("configure.sh"))
	}, timeout).Should(Succeed())

	// Fixed by hand, h2 runs the script again and succeeds.
	api.AddEvent(devices["h2"], "user.succeeded", "succeeded", "Network configuration successful")
	g.Eventually(func(g Gomega) {
		c := hostsCondition(g, ns)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Reason).To(Equal(netv1.ReasonHostsNetworkConfigured))
		g.Expect(c.Message).To(HavePrefix("all 2 host(s) reported their network configured"))
	}, timeout).Should(Succeed())
	reads := api.EventReads(devices["h1"])
	// Another change makes a pass: the hosts that succeeded are not asked again.
	selectHost(t, ns, "h2", "")
	g.Eventually(func(g Gomega) {
		typ, _, _ := api.DeviceState(devices["h2"])
		g.Expect(typ).To(Equal("layer3"))
		g.Expect(hostsCondition(g, ns).Message).To(HavePrefix("all 1 host(s) reported"))
	}, timeout).Should(Succeed())
	g.Expect(api.EventReads(devices["h1"])).To(Equal(reads), "h1 succeeded: its events are not read again")
}
