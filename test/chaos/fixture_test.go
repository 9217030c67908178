package chaos

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/pkg/render"
	"github.com/metalwire/metalwire/test/scale/measure"
)

const (
	// writers is how many goroutines create objects, as a MachineDeployment scaling up would.
	writers = 8
	// templateName is the one Metal3DataTemplate; its Metal3Data are <templateName>-<index>.
	templateName = "workers"
	clusterName  = "chaos"
)

// pools are the two pools every machine takes an address from: provisioning for metaData and
// network data, external with a gateway for the default route.
var pools = []string{"prov", "ext"}

// dataTemplate is test/scale/data's: an address from each pool, an index, the machine's name.
const dataTemplate = `
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

// setupData creates the pools and the template, then n inspected hosts with a Machine and a
// Metal3Machine each, associated as the machine controller leaves them. It returns the
// Metal3Machines, whose claims the scenario creates.
func setupData(t *testing.T, c *cluster, n int) []*infrav1.Metal3Machine {
	t.Helper()
	ctx := context.Background()
	for i, name := range pools {
		start, end := ipamv1.IPAddressStr(fmt.Sprintf("10.%d.0.1", 10*(i+1))), ipamv1.IPAddressStr(fmt.Sprintf("10.%d.255.250", 10*(i+1)))
		p := &ipamv1.IPPool{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       ipamv1.IPPoolSpec{NamePrefix: name, Pools: []ipamv1.Pool{{Start: &start, End: &end}}, Prefix: 16},
		}
		if name == "ext" {
			p.Spec.Gateway = ptr.To(ipamv1.IPAddressStr("10.20.255.254"))
		}
		if err := c.env.Client.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	decoded, err := render.DecodeTemplate([]byte(dataTemplate))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.env.Client.Create(ctx, &infrav1.Metal3DataTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: templateName},
		Spec:       infrav1.Metal3DataTemplateSpec{ClusterName: clusterName, MetaData: decoded.MetaData, NetworkData: decoded.NetworkData},
	}); err != nil {
		t.Fatal(err)
	}
	m3ms := make([]*infrav1.Metal3Machine, n)
	if err := parallel(n, "hosts, Machines and Metal3Machines", func(i int) error {
		var err error
		m3ms[i], err = createMachine(ctx, c, i)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return m3ms
}

// createMachine creates host-i (inspected, two NICs), Machine m-i and Metal3Machine m-i holding
// the host.
func createMachine(ctx context.Context, c *cluster, i int) (*infrav1.Metal3Machine, error) {
	name := fmt.Sprintf("m-%d", i)
	h := &bmov1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("host-%d", i)},
		Spec:       bmov1.BareMetalHostSpec{Online: true},
	}
	if err := c.env.Client.Create(ctx, h); err != nil {
		return nil, err
	}
	h.Status.HardwareDetails = &bmov1.HardwareDetails{NIC: []bmov1.NIC{
		{Name: "eth0", MAC: fmt.Sprintf("52:54:00:00:%02x:%02x", i/256, i%256)},
		{Name: "eth1", MAC: fmt.Sprintf("52:54:00:01:%02x:%02x", i/256, i%256)},
	}}
	if err := c.env.Client.Status().Update(ctx, h); err != nil {
		return nil, err
	}
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName}},
		Spec: clusterv1.MachineSpec{
			ClusterName: clusterName,
			Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To(name + "-bootstrap")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Machine", Name: name,
			},
		},
	}
	if err := c.env.Client.Create(ctx, m); err != nil {
		return nil, err
	}
	m3m := &infrav1.Metal3Machine{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: clusterName},
			Annotations:     map[string]string{infrav1.HostAnnotation: ns + "/" + h.Name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: m.Name, UID: m.UID}},
		},
		Spec: infrav1.Metal3MachineSpec{
			Image:        infrav1.Image{URL: "http://images.example.com/ubuntu.qcow2", Checksum: ptr.To("0123456789abcdef")},
			DataTemplate: &corev1.ObjectReference{Name: templateName},
		},
	}
	return m3m, c.env.Client.Create(ctx, m3m)
}

// createClaims creates each machine's Metal3DataClaim as the machine controller does. It may
// run beside the test's goroutine, so it returns its error rather than fail the test.
func createClaims(c *cluster, m3ms []*infrav1.Metal3Machine) error {
	ctx := context.Background()
	return parallel(len(m3ms), "creating Metal3DataClaims", func(i int) error {
		m3m := m3ms[i]
		err := c.env.Client.Create(ctx, &infrav1.Metal3DataClaim{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: ns, Name: m3m.Name,
				Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName},
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3Machine", Name: m3m.Name, UID: m3m.UID,
					Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
				}},
			},
			Spec: infrav1.Metal3DataClaimSpec{Template: corev1.ObjectReference{Name: templateName, Namespace: ns}},
		})
		return err
	})
}

// deleteClaims deletes every machine's claim, as the machine controller does when a
// MachineDeployment scales down.
func deleteClaims(t *testing.T, c *cluster, m3ms []*infrav1.Metal3Machine) {
	t.Helper()
	ctx := context.Background()
	if err := parallel(len(m3ms), "deleting Metal3DataClaims", func(i int) error {
		claim := &infrav1.Metal3DataClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: m3ms[i].Name}}
		if err := c.env.Client.Delete(ctx, claim); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// parallel runs fn for 0..n-1 from the writers and returns the first error, saying what was
// being done.
func parallel(n int, what string, fn func(i int) error) error {
	if err := measure.RunParallel(writers, n, fn); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
