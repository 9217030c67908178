package clusternetwork_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/clusternetwork"
	"github.com/metalwire/metalwire/internal/controller/networkdevice"
	"github.com/metalwire/metalwire/internal/switchdriver"
	"github.com/metalwire/metalwire/internal/switchdriver/standin"
	"github.com/metalwire/metalwire/internal/testenv"
)

const timeout = 60 * time.Second

// startFabric starts a manager running both fabric controllers over ns, with drv as the only
// switch driver.
func startFabric(t *testing.T, ns string, drv *standin.Driver) {
	t.Helper()
	reg := &switchdriver.Registry{}
	reg.Register(drv)
	startFabricWith(t, ns, reg)
}

// startFabricWith starts a manager running both fabric controllers over ns with the drivers of
// reg; opts change the manager's options.
func startFabricWith(t *testing.T, ns string, reg *switchdriver.Registry, opts ...func(*ctrl.Options)) {
	t.Helper()
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	o := ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	}
	for _, f := range opts {
		f(&o)
	}
	mgr, err := ctrl.NewManager(env.Config, o)
	g.Expect(err).NotTo(HaveOccurred())
	nd := &networkdevice.Reconciler{Client: mgr.GetClient(), Drivers: reg, Concurrency: 2, RetryMin: 200 * time.Millisecond, RetryMax: time.Second}
	g.Expect(nd.SetupWithManager(ctx, mgr, 2)).To(Succeed())
	cn := &clusternetwork.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), VLANRetry: time.Second}
	g.Expect(cn.SetupWithManager(ctx, mgr, 2)).To(Succeed())
	done := make(chan struct{})
	go func() {
		defer close(done)
		testenv.ReportManagerExit(t, mgr.Start(ctx))
	}()
	t.Cleanup(func() { cancel(); <-done })
}

func networkDevice(ns string, switches ...string) *netv1.NetworkDevice {
	nd := &netv1.NetworkDevice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd1"}}
	for _, s := range switches {
		nd.Spec.Switches = append(nd.Spec.Switches, netv1.Switch{Name: s, Address: ns + "-" + s, NetworkOS: netv1.NetworkOSOpenvSwitch})
	}
	return nd
}

// hostNIC is a host with one 1000 Mb/s card on switch1 and one on switch2, both port <host>.
func hostNIC(ns, host string) *netv1.NIC {
	card := func(sw string) netv1.HostNIC {
		return netv1.HostNIC{
			NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: sw, Port: intstr.FromString("p-" + host)}},
			Capability:    netv1.NICCapability{Speed: 1000},
		}
	}
	return &netv1.NIC{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nic-" + host},
		Spec:       netv1.NICSpec{Node: host, NetworkDeviceRef: "nd1", NICs: []netv1.HostNIC{card("switch1"), card("switch2")}},
	}
}

func clusterNetwork(ns, name, vlanRange string, networks ...string) *netv1.ClusterNetwork {
	cn := &netv1.ClusterNetwork{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       netv1.ClusterNetworkSpec{NetworkDeviceRef: "nd1", VLANRange: vlanRange},
	}
	for _, n := range networks {
		cn.Spec.Networks = append(cn.Spec.Networks, netv1.Network{Name: n, NICHint: netv1.NICHint{Speed: 1000}})
	}
	return cn
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// selectHost labels a host's NIC as the Metal3Machine controller does.
func selectHost(t *testing.T, ns, host, cn string) {
	t.Helper()
	g := NewWithT(t)
	nic := &netv1.NIC{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "nic-" + host}, nic)).To(Succeed())
	base := nic.DeepCopy()
	if cn == "" {
		delete(nic.Labels, netv1.SelectedForLabel)
	} else {
		if nic.Labels == nil {
			nic.Labels = map[string]string{}
		}
		nic.Labels[netv1.SelectedForLabel] = cn
	}
	g.Expect(env.Client.Patch(context.Background(), nic, client.MergeFrom(base))).To(Succeed())
}

func getCN(g Gomega, ns, name string) *netv1.ClusterNetwork {
	cn := &netv1.ClusterNetwork{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, cn)).To(Succeed())
	return cn
}

func state(g Gomega, ns, cn, host string) netv1.HostNetworkState {
	return getCN(g, ns, cn).Status.States[host]
}

func condition(conds []metav1.Condition, typ string) string {
	for _, c := range conds {
		if c.Type == typ {
			return fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message)
		}
	}
	return "<none>"
}
