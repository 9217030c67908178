package networkdevice_test

import (
	"context"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/networkdevice"
	"github.com/metalwire/metalwire/internal/devenv/standin"
	"github.com/metalwire/metalwire/internal/switchdriver"
)

// laggingCache is the manager's cache as a test stages it: the NetworkDevice as an older copy
// (the cache trailing the controller's own status writes), the NICs as they are.
type laggingCache struct {
	client.Client
	mu sync.Mutex
	nd *netv1.NetworkDevice
}

func (c *laggingCache) show(nd *netv1.NetworkDevice) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nd = nd.DeepCopy()
}

func (c *laggingCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if nd, ok := obj.(*netv1.NetworkDevice); ok {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.nd.DeepCopyInto(nd)
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// List serves the NICs of the namespace: the field index the controller lists by is the
// cache's, which the API server does not know.
func (c *laggingCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := &client.ListOptions{}
	o.ApplyOptions(opts)
	return c.Client.List(ctx, list, client.InNamespace(o.Namespace))
}

// A pass may start while the cache shows none of the controller's last two status writes, or
// only the first: the record of what the switches carry is the one it wrote last either way.
// Before, a cache showing the first write passed for showing the second, and a pass that found
// the switch in line wrote the older record back: the port configured in between was no longer
// recorded, its host never ready, and the port never reset when the host left.
func TestAPassStartsFromTheLastRecordWrittenWhateverTheCacheShows(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	drv := standin.New("openvswitch")
	drv.Switch(ns+"-sw1").AddPorts(1, "p-a", "p-b")
	drv.Switch(ns+"-sw2").AddPorts(1, "p-c")
	reg := &switchdriver.Registry{}
	reg.Register(drv)

	nd := &netv1.NetworkDevice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd1"},
		Spec: netv1.NetworkDeviceSpec{Switches: []netv1.Switch{
			{Name: "sw1", Address: ns + "-sw1", NetworkOS: netv1.NetworkOSOpenvSwitch},
			{Name: "sw2", Address: ns + "-sw2", NetworkOS: netv1.NetworkOSOpenvSwitch},
		}}}
	g.Expect(env.Client.Create(ctx, nd)).To(Succeed())
	for h, sw := range map[string]string{"a": "sw1", "b": "sw1", "c": "sw2"} {
		nic := &netv1.NIC{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nic-" + h},
			Spec: netv1.NICSpec{Node: h, NetworkDeviceRef: "nd1", NICs: []netv1.HostNIC{{
				NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: sw, Port: intstr.FromString("p-" + h)}},
				Capability:    netv1.NICCapability{Speed: 1000}}}}}
		g.Expect(env.Client.Create(ctx, nic)).To(Succeed())
	}
	join := func(h string, vlan int32) {
		nic := &netv1.NIC{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nic-" + h}, nic)).To(Succeed())
		base := nic.DeepCopy()
		nic.Status = netv1.NICStatus{ClusterNetwork: "cn1", NICs: []*netv1.NICAssignment{{Network: "control", VLANID: vlan, PortMode: netv1.PortModeAccess}}}
		g.Expect(env.Client.Status().Patch(ctx, nic, client.MergeFrom(base))).To(Succeed())
	}
	fresh := func() *netv1.NetworkDevice {
		out := &netv1.NetworkDevice{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(nd), out)).To(Succeed())
		return out
	}
	recorded := func() []string {
		var ports []string
		for _, s := range fresh().Status.Switches {
			for _, p := range s.Ports {
				ports = append(ports, p.Name)
			}
		}
		return ports
	}

	cache := &laggingCache{Client: env.Client}
	cs, err := kubernetes.NewForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	// Every switch in line is left alone for an hour, as the manager does between resyncs.
	r := (&networkdevice.Reconciler{Client: cache, Drivers: reg, PassQuiet: -1, ReadAgainAfter: time.Hour}).WithoutManager(cs)
	pass := func() {
		t.Helper()
		_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(nd)})
		g.Expect(err).NotTo(HaveOccurred())
	}

	stale := fresh() // the cache, before any pass
	cache.show(stale)
	join("a", 1000)
	pass()
	first := fresh()
	g.Expect(recorded()).To(ConsistOf("p-a"))

	join("b", 1000)
	pass() // the cache still shows neither write
	g.Expect(recorded()).To(ConsistOf("p-a", "p-b"))

	// The cache catches up with the first write only; a host joins on the other switch, so
	// the pass writes a record, sw1's in it: sw1 is in line and not read again.
	cache.show(first)
	join("c", 1000)
	pass()
	g.Expect(recorded()).To(ConsistOf("p-a", "p-b", "p-c"), "the port configured by the second write is still recorded")
	port, _ := drv.Switch(ns + "-sw1").Port("p-b")
	g.Expect(port.VLAN).To(Equal(1000))
}
