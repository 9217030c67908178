package metal3machine

import (
	"context"
	"maps"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

const (
	eventually = 20 * time.Second
	poll       = 100 * time.Millisecond
)

// newNamespace gives the test a namespace of its own.
func newNamespace(t *testing.T) string { return env.NewNamespace(t) }

type clusterOpts struct {
	paused               bool
	unprovisioned        bool
	cloudProviderEnabled *bool
}

// createCluster makes a Cluster and its Metal3Cluster as Cluster API would have them, with the
// Cluster's infrastructure provisioned unless told otherwise.
func createCluster(t *testing.T, ns, name string, o clusterOpts) *clusterv1.Cluster {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1.ClusterSpec{
			Paused:            ptr.To(o.paused),
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Cluster", Name: name},
		},
	}
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
	cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(!o.unprovisioned)
	g.Expect(env.Client.Status().Update(ctx, cluster)).To(Succeed())

	m3c := &infrav1.Metal3Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: name}},
		Spec: infrav1.Metal3ClusterSpec{
			ControlPlaneEndpoint: infrav1.APIEndpoint{Host: "192.168.111.249", Port: 6443},
			CloudProviderEnabled: o.cloudProviderEnabled,
		},
	}
	g.Expect(env.Client.Create(ctx, m3c)).To(Succeed())
	return cluster
}

type machineOpts struct {
	bootstrap    string // Machine.spec.bootstrap.dataSecretName; "" means not yet
	selector     infrav1.HostSelector
	userData     *corev1.SecretReference
	metaData     *corev1.SecretReference
	networkData  *corev1.SecretReference
	dataTemplate *corev1.ObjectReference
	cleaning     *infrav1.AutomatedCleaningMode
	labels       map[string]string // more labels on the Metal3Machine
}

// createMachine makes a Machine and the Metal3Machine it owns, as the Machine controller would.
func createMachine(t *testing.T, cluster *clusterv1.Cluster, name string, o machineOpts) *infrav1.Metal3Machine {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: cluster.Name}},
		Spec: clusterv1.MachineSpec{
			ClusterName: cluster.Name,
			Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfig", Name: name,
			}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Machine", Name: name},
		},
	}
	if o.bootstrap != "" {
		machine.Spec.Bootstrap.DataSecretName = ptr.To(o.bootstrap)
	}
	g.Expect(env.Client.Create(ctx, machine)).To(Succeed())

	m3mLabels := map[string]string{clusterv1.ClusterNameLabel: cluster.Name}
	maps.Copy(m3mLabels, o.labels)
	m3m := &infrav1.Metal3Machine{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: cluster.Namespace, Name: name,
			Labels: m3mLabels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: machine.Name, UID: machine.UID,
			}},
		},
		Spec: infrav1.Metal3MachineSpec{
			Image:                 infrav1.Image{URL: "http://images.example.com/ubuntu.qcow2", Checksum: ptr.To("0123456789abcdef")},
			HostSelector:          o.selector,
			UserData:              o.userData,
			MetaData:              o.metaData,
			NetworkData:           o.networkData,
			DataTemplate:          o.dataTemplate,
			AutomatedCleaningMode: o.cleaning,
		},
	}
	g.Expect(env.Client.Create(ctx, m3m)).To(Succeed())
	return m3m
}

// createHost registers a host as BMO would have it after inspection, with fields we do not
// model in spec and status, which every change we make must keep.
func createHost(t *testing.T, ns, name string, labels map[string]string, state bmov1.ProvisioningState) *bmov1.BareMetalHost {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": bmov1.GroupVersion.String(),
		"kind":       "BareMetalHost",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"online":          false,
			"bootMACAddress":  "00:11:22:33:44:55",
			"bmc":             map[string]any{"address": "redfish://10.0.0.1/redfish/v1/Systems/" + name, "credentialsName": name + "-bmc"},
			"rootDeviceHints": map[string]any{"deviceName": "/dev/sda"},
		},
	}}
	u.SetLabels(labels)
	g.Expect(env.Client.Create(ctx, u)).To(Succeed())
	u.Object["status"] = map[string]any{
		"operationalStatus": "OK",
		"errorMessage":      "",
		"poweredOn":         false,
		"provisioning":      map[string]any{"state": string(state), "bootMode": "UEFI"},
		"hardware": map[string]any{
			"hostname": name,
			"cpu":      map[string]any{"arch": "x86_64", "count": int64(32)},
			"nics":     []any{map[string]any{"name": "eno1", "mac": "00:11:22:33:44:55", "ip": "192.168.111.20", "pxe": true}},
		},
	}
	g.Expect(env.Client.Status().Update(ctx, u)).To(Succeed())
	host := &bmov1.BareMetalHost{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, host)).To(Succeed())
	return host
}

// setHostState plays BMO: it moves the host to a provisioning state.
func setHostState(t *testing.T, ns, name string, state bmov1.ProvisioningState) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(func() error {
		host := &bmov1.BareMetalHost{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, host); err != nil {
			return err
		}
		orig := host.DeepCopy()
		host.Status.Provisioning.State = state
		return env.Client.Status().Patch(context.Background(), host, client.MergeFrom(orig))
	}, eventually, poll).Should(Succeed())
}

func getHostUnstructured(g Gomega, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(bmov1.GroupVersion.String())
	u.SetKind("BareMetalHost")
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u)).To(Succeed())
	return u
}

func getM3M(g Gomega, m3m *infrav1.Metal3Machine) *infrav1.Metal3Machine {
	out := &infrav1.Metal3Machine{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(m3m), out)).To(Succeed())
	return out
}

func getHost(g Gomega, ns, name string) *bmov1.BareMetalHost {
	out := &bmov1.BareMetalHost{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, out)).To(Succeed())
	return out
}

// condition returns a condition of the machine, or an empty one.
func condition(m3m *infrav1.Metal3Machine, typ string) metav1.Condition {
	if c := conditions.Get(m3m, typ); c != nil {
		return *c
	}
	return metav1.Condition{}
}

func createSecret(t *testing.T, ns, name, key, value string) *corev1.SecretReference {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, StringData: map[string]string{key: value}}
	NewWithT(t).Expect(env.Client.Create(context.Background(), s)).To(Succeed())
	return &corev1.SecretReference{Namespace: ns, Name: name}
}
