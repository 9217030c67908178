package clusternetwork_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/devenv/standin"
	"github.com/metalwire/metalwire/internal/manager"
	"github.com/metalwire/metalwire/internal/switchdriver"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// With --watch-filter=team-a the fabric controllers configure team-a's switch for team-a's
// ClusterNetwork, and never reach team-b's switch nor write team-b's NetworkDevice,
// ClusterNetwork or NIC.
func TestWatchFilterConfiguresOnlyTheLabelledFabric(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	drv := standin.New("openvswitch")
	ours, theirs := drv.Switch(ns+"-switch1"), drv.Switch(ns+"-switch9")
	ours.AddPorts(1, "p-bm0")
	theirs.AddPorts(1, "p-bm9")
	reg := &switchdriver.Registry{}
	reg.Register(drv)

	// The image's manager with the fabric controllers, as `metalwire manager --watch-filter=team-a`.
	startFabricWith(t, ns, reg, func(o *manager.Options) { o.WatchFilter = "team-a" })

	team := func(o client.Object, value string) client.Object {
		o.SetLabels(map[string]string{clusterv1.WatchLabel: value})
		return o
	}
	theirDevice := &netv1.NetworkDevice{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd9"},
		Spec:       netv1.NetworkDeviceSpec{Switches: []netv1.Switch{{Name: "switch9", Address: ns + "-switch9", NetworkOS: netv1.NetworkOSOpenvSwitch}}},
	}
	theirNIC := &netv1.NIC{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nic-bm9", Labels: map[string]string{netv1.SelectedForLabel: "cn9"}},
		Spec: netv1.NICSpec{Node: "bm9", NetworkDeviceRef: "nd9", NICs: []netv1.HostNIC{{
			NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: "switch9", Port: intstr.FromString("p-bm9")}},
			Capability:    netv1.NICCapability{Speed: 1000},
		}}},
	}
	theirNetwork := &netv1.ClusterNetwork{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cn9"},
		Spec: netv1.ClusterNetworkSpec{NetworkDeviceRef: "nd9", VLANRange: "2000-2999",
			Networks: []netv1.Network{{Name: "control", NICHint: netv1.NICHint{Speed: 1000}}}},
	}
	untouched := []client.Object{team(theirDevice, "team-b"), theirNIC, team(theirNetwork, "team-b")}
	create(t, untouched...)
	create(t, team(networkDevice(ns, "switch1"), "team-a"), team(clusterNetwork(ns, "cn1", "1000-1999", "control"), "team-a"))
	nic := hostNIC(ns, "bm0")
	nic.Spec.NICs = nic.Spec.NICs[:1] // switch1 only
	create(t, nic)
	selectHost(t, ns, "bm0", "cn1")

	g.Eventually(func(g Gomega) {
		g.Expect(state(g, ns, "cn1", "bm0")).To(Equal(netv1.HostNetworkState{NIC: "nic-bm0", State: netv1.HostReady}))
		p, _ := ours.Port("p-bm0")
		g.Expect(p).To(Equal(fabric.Port{Name: "p-bm0", Mode: fabric.ModeAccess, VLAN: 1000}))
	}, timeout).Should(Succeed())

	versions := map[client.Object]string{}
	for _, o := range untouched {
		versions[o] = o.GetResourceVersion()
	}
	g.Consistently(func(g Gomega) {
		for _, o := range untouched {
			got := o.DeepCopyObject().(client.Object)
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(o), got)).To(Succeed())
			g.Expect(got.GetResourceVersion()).To(Equal(versions[o]), "%T %s was written", o, o.GetName())
		}
		applies, _ := theirs.Counts()
		g.Expect(applies).To(BeZero(), "team-b's switch was configured: %v", theirs.Log())
		p, _ := theirs.Port("p-bm9")
		g.Expect(p.VLAN).To(Equal(1))
	}, 3*time.Second, 200*time.Millisecond).Should(Succeed())
}
