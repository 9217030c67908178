package data

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/pkg/render"
)

// writers is how many goroutines create objects, as a MachineDeployment scaling up would.
const writers = 8

// benchTemplate takes an address from each of two pools for metaData and network data.
const benchTemplate = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3DataTemplate
metadata: {name: workers}
spec:
  metaData:
    ipAddressesFromPool: [{key: provisioningIP, name: prov}, {key: externalIP, name: ext}]
    indexes: [{key: hostname, prefix: worker-}]
    objectNames: [{key: local-hostname, object: machine}]
  networkData:
    links:
      ethernets:
        - {type: phy, id: eth0, macAddress: {fromHostInterface: eth0}}
        - {type: phy, id: eth1, macAddress: {fromHostInterface: eth1}}
    networks:
      ipv4:
        - {id: prov, link: eth0, ipAddressFromIPPool: prov}
        - id: ext
          link: eth1
          ipAddressFromIPPool: ext
          routes: [{network: 0.0.0.0, gateway: {fromIPPool: ext}}]
`

// fixture creates a run's objects in one namespace.
type fixture struct {
	c  client.Client
	ns string
}

// base creates the namespace, the two /16 pools and the template.
func (f fixture) base(ctx context.Context) (*infrav1.Metal3DataTemplate, error) {
	if err := f.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.ns}}); err != nil {
		return nil, err
	}
	for _, p := range []struct{ name, start, end, gateway string }{
		{"prov", "10.10.0.1", "10.10.255.254", ""},
		{"ext", "10.20.0.1", "10.20.255.254", "10.20.0.254"},
	} {
		s, e := ipamv1.IPAddressStr(p.start), ipamv1.IPAddressStr(p.end)
		pool := &ipamv1.IPPool{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: p.name},
			Spec:       ipamv1.IPPoolSpec{NamePrefix: p.name, Pools: []ipamv1.Pool{{Start: &s, End: &e}}, Prefix: 16},
		}
		if p.gateway != "" {
			pool.Spec.Gateway = ptr.To(ipamv1.IPAddressStr(p.gateway))
		}
		if err := f.c.Create(ctx, pool); err != nil {
			return nil, err
		}
	}
	decoded, err := render.DecodeTemplate([]byte(benchTemplate))
	if err != nil {
		return nil, err
	}
	tmpl := &infrav1.Metal3DataTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "workers"},
		Spec:       infrav1.Metal3DataTemplateSpec{ClusterName: "bench", MetaData: decoded.MetaData, NetworkData: decoded.NetworkData},
	}
	return tmpl, f.c.Create(ctx, tmpl)
}

// machine creates host-i (inspected, two NICs), Machine m-i and Metal3Machine m-i holding the
// host, as the machine controller would have left them.
func (f fixture) machine(ctx context.Context, i int) (*infrav1.Metal3Machine, error) {
	name := fmt.Sprintf("m-%d", i)
	h := &bmov1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: fmt.Sprintf("host-%d", i)},
		Spec:       bmov1.BareMetalHostSpec{Online: true},
	}
	if err := f.c.Create(ctx, h); err != nil {
		return nil, err
	}
	h.Status.HardwareDetails = &bmov1.HardwareDetails{NIC: []bmov1.NIC{
		{Name: "eth0", MAC: fmt.Sprintf("52:54:00:00:%02x:%02x", i/256, i%256)},
		{Name: "eth1", MAC: fmt.Sprintf("52:54:00:01:%02x:%02x", i/256, i%256)},
	}}
	if err := f.c.Status().Update(ctx, h); err != nil {
		return nil, err
	}
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: "bench"}},
		Spec: clusterv1.MachineSpec{
			ClusterName: "bench",
			Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To(name + "-bootstrap")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Machine", Name: name,
			},
		},
	}
	if err := f.c.Create(ctx, m); err != nil {
		return nil, err
	}
	m3m := &infrav1.Metal3Machine{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: f.ns, Name: name,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: "bench"},
			Annotations:     map[string]string{infrav1.HostAnnotation: f.ns + "/" + h.Name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: m.Name, UID: m.UID}},
		},
		Spec: infrav1.Metal3MachineSpec{
			Image:        infrav1.Image{URL: "http://images.example.com/ubuntu.qcow2", Checksum: ptr.To("0123456789abcdef")},
			DataTemplate: &corev1.ObjectReference{Name: "workers"},
		},
	}
	return m3m, f.c.Create(ctx, m3m)
}

// claim creates the Metal3DataClaim of a Metal3Machine, as the machine controller makes it.
func (f fixture) claim(ctx context.Context, m3m *infrav1.Metal3Machine) (*infrav1.Metal3DataClaim, error) {
	c := &infrav1.Metal3DataClaim{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: f.ns, Name: m3m.Name,
			Labels: map[string]string{clusterv1.ClusterNameLabel: "bench"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3Machine", Name: m3m.Name, UID: m3m.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: infrav1.Metal3DataClaimSpec{Template: corev1.ObjectReference{Name: "workers", Namespace: f.ns}},
	}
	return c, f.c.Create(ctx, c)
}

// machines creates n hosts, Machines and Metal3Machines.
func (f fixture) machines(t *testing.T, n int) []*infrav1.Metal3Machine {
	t.Helper()
	m3ms := make([]*infrav1.Metal3Machine, n)
	parallel(t, n, func(i int) error {
		var err error
		m3ms[i], err = f.machine(context.Background(), i)
		return err
	})
	return m3ms
}

// parallel runs fn for 0..n-1 from the writers and fails the test on the first error.
func parallel(t *testing.T, n int, fn func(i int) error) {
	t.Helper()
	if err := parallelErr(n, writers, fn); err != nil {
		t.Fatal(err)
	}
}

func parallelErr(n, workers int, fn func(i int) error) error {
	var (
		next   atomic.Int64
		wg     sync.WaitGroup
		failed atomic.Value
	)
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || failed.Load() != nil {
					return
				}
				if err := fn(i); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	err, _ := failed.Load().(error)
	return err
}
