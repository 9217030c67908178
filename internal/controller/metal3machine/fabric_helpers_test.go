package metal3machine

import (
	"context"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/clusternetwork"
	"github.com/metalwire/metalwire/internal/controller/networkdevice"
	"github.com/metalwire/metalwire/internal/devenv/standin"
	"github.com/metalwire/metalwire/internal/switchdriver"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// switches are the stand-in switches the fabric controllers of the test manager drive; each
// test uses addresses of its own namespace.
var switches = &gatedDriver{Driver: standin.New(string(netv1.NetworkOSOpenvSwitch))}

// gatedDriver is the stand-in driver with a gate per switch address: while a gate is shut,
// connecting to that switch waits, so a test sees a host's ports stay "configuring".
type gatedDriver struct {
	*standin.Driver
	gates sync.Map // address -> chan struct{}
}

// shut makes connections to address wait until the returned function opens the gate again
// (also at the end of the test).
func (d *gatedDriver) shut(t *testing.T, address string) func() {
	ch := make(chan struct{})
	d.gates.Store(address, ch)
	var once sync.Once
	open := func() { once.Do(func() { d.gates.Delete(address); close(ch) }) }
	t.Cleanup(open)
	return open
}

// Connect implements fabric.Driver.
func (d *gatedDriver) Connect(ctx context.Context, ep fabric.Endpoint) (fabric.Session, error) {
	if ch, ok := d.gates.Load(ep.Address); ok {
		select {
		case <-ch.(chan struct{}):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return d.Driver.Connect(ctx, ep)
}

// startFabric runs the fabric controllers (networkdevice, clusternetwork) in the test manager,
// beside the Metal3Machine controller, as the real manager does.
func startFabric(ctx context.Context, mgr ctrl.Manager) error {
	reg := &switchdriver.Registry{}
	reg.Register(switches)
	nd := &networkdevice.Reconciler{Client: mgr.GetClient(), Drivers: reg, Concurrency: 4, RetryMin: 200 * time.Millisecond, RetryMax: time.Second}
	if err := nd.SetupWithManager(ctx, mgr, 4); err != nil {
		return err
	}
	cn := &clusternetwork.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), VLANRetry: time.Second}
	return cn.SetupWithManager(ctx, mgr, 2)
}

// createFabric makes a NetworkDevice nd1 with the given switches (stand-ins at <ns>-<name>), a
// ClusterNetwork cn1 with one network, "control", in VLANs 1000-1999, and names cn1 in the
// cluster's Metal3Cluster.
func createFabric(t *testing.T, ns, cluster string, switchNames ...string) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	nd := &netv1.NetworkDevice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd1"}}
	for _, s := range switchNames {
		nd.Spec.Switches = append(nd.Spec.Switches, netv1.Switch{Name: s, Address: ns + "-" + s, NetworkOS: netv1.NetworkOSOpenvSwitch})
	}
	g.Expect(env.Client.Create(ctx, nd)).To(Succeed())
	cn := &netv1.ClusterNetwork{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cn1"},
		Spec: netv1.ClusterNetworkSpec{NetworkDeviceRef: "nd1", VLANRange: "1000-1999",
			Networks: []netv1.Network{{Name: "control", NICHint: netv1.NICHint{Speed: 1000}}}},
	}
	g.Expect(env.Client.Create(ctx, cn)).To(Succeed())
	g.Eventually(func() error {
		m3c := &infrav1.Metal3Cluster{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: cluster}, m3c); err != nil {
			return err
		}
		orig := m3c.DeepCopy()
		m3c.Spec.ClusterNetwork = "cn1"
		return env.Client.Patch(ctx, m3c, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	}, eventually, poll).Should(Succeed())
}

// createNIC cables host's one 1000 Mb/s card to port p-<host> of switch sw (idle VLAN 1).
func createNIC(t *testing.T, ns, host, sw string) {
	t.Helper()
	switches.Switch(ns+"-"+sw).AddPorts(1, "p-"+host)
	nic := &netv1.NIC{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nic-" + host},
		Spec: netv1.NICSpec{Node: host, NetworkDeviceRef: "nd1", NICs: []netv1.HostNIC{{
			NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: sw, Port: intstr.FromString("p-" + host)}},
			Capability:    netv1.NICCapability{Speed: 1000},
		}}},
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), nic)).To(Succeed())
}

func getCN(g Gomega, ns string) *netv1.ClusterNetwork {
	cn := &netv1.ClusterNetwork{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "cn1"}, cn)).To(Succeed())
	return cn
}

func nicLabel(g Gomega, ns, host string) string {
	nic := &netv1.NIC{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "nic-" + host}, nic)).To(Succeed())
	return nic.Labels[netv1.SelectedForLabel]
}
