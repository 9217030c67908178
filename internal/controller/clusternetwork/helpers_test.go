package clusternetwork_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller"
	"github.com/metalwire/metalwire/internal/devenv/standin"
	"github.com/metalwire/metalwire/internal/manager"
	"github.com/metalwire/metalwire/internal/manager/managertest"
	"github.com/metalwire/metalwire/internal/switchdriver"
	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
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

// startFabricWith starts the image's manager running the fabric controllers over ns with the
// drivers of reg; tune changes its options.
func startFabricWith(t *testing.T, ns string, reg *switchdriver.Registry, tune ...func(*manager.Options)) {
	t.Helper()
	managertest.Start(t, env, ns, []controller.Group{controller.Fabric}, append([]func(*manager.Options){func(o *manager.Options) {
		o.SwitchDrivers = reg
		o.SwitchRetryMin, o.SwitchRetryMax, o.VLANRetry = 200*time.Millisecond, time.Second, time.Second
	}}, tune...)...)
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

// leafSwitch starts a real user-space Open vSwitch (ovs-vswitchd too: ovs-vsctl over SSH waits
// for it) with bridge br0 holding ports in the idle VLAN, and returns it and the bridge's name.
func leafSwitch(t *testing.T, ports ...string) (*ovstest.Switch, string) {
	t.Helper()
	sw := ovstest.StartSwitch(t, ovstest.Options{VSwitchd: true})
	br := sw.AddBridge(t, "br0")
	sw.AddPorts(t, br, ovstest.IdleVLAN, ports...)
	return sw, br
}
