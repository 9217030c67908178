package metal3data_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller"
	"github.com/metalwire/metalwire/internal/manager/managertest"
)

// TestTakeoverFromCAPM3: a cluster as a running CAPM3 leaves it — a Metal3DataTemplate with
// status.indexes, the machine's Metal3DataClaim and ready Metal3Data, the two rendered Secrets
// named <machine>-metadata and <machine>-networkdata (labelled only with the cluster name, so
// outside metalwire's Secret cache), the IPClaim and IPAddress, and a provisioned host pointing
// at the Secrets — and then metalwire's infrastructure and IPAM controllers started as the
// manager starts them. Nothing is re-rendered (the Secrets keep their resourceVersion), the
// host is not re-pointed, and a new machine takes the next free index with its own Secrets.
func TestTakeoverFromCAPM3(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	capm3 := leaveAsCAPM3(t, ns)

	startMetalwire(t, ns)

	// Long enough for every controller to have looked at every object more than once.
	g.Consistently(func(g Gomega) {
		for name, rv := range capm3.secretVersions {
			g.Expect(getSecret(g, ns, name).ResourceVersion).To(Equal(rv), "Secret %s was rewritten", name)
		}
		h := &bmov1.BareMetalHost{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "host-0"}, h)).To(Succeed())
		g.Expect(h.Spec.MetaData).To(Equal(&corev1.SecretReference{Name: "m0-metadata", Namespace: ns}))
		g.Expect(h.Spec.NetworkData).To(Equal(&corev1.SecretReference{Name: "m0-networkdata", Namespace: ns}))
		g.Expect(h.Spec.UserData).To(Equal(&corev1.SecretReference{Name: "m0-bootstrap", Namespace: ns}))
		data := getData(g, ns, "tmpl-0")
		g.Expect(data.Status.Ready).To(BeTrue())
		g.Expect(data.Spec.MetaData.Name).To(Equal("m0-metadata"))
		g.Expect(data.Spec.NetworkData.Name).To(Equal("m0-networkdata"))
		secrets := &corev1.SecretList{}
		g.Expect(env.Client.List(ctx, secrets, client.InNamespace(ns))).To(Succeed())
		for _, s := range secrets.Items {
			g.Expect(s.Name).NotTo(HavePrefix("m0-metadata-"), "no Secret in metalwire's naming for the adopted machine")
			g.Expect(s.Name).NotTo(HavePrefix("m0-networkdata-"))
		}
	}).WithTimeout(8 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())

	// Scaling carries on: a new machine gets index 1, the next free one, and its own Secrets.
	newMachine(t, ns, "m1", "host-1")
	data := renderedData(t, ns, "m1")
	g.Expect(data.Name).To(Equal("tmpl-1"))
	g.Expect(data.Spec.Index).To(Equal(ptr.To[int32](1)))
	md := getSecret(g, ns, data.Spec.MetaData.Name)
	g.Expect(md.Name).To(Equal(infrav1.MetaDataSecretName("m1", 1)))
	g.Expect(string(md.Data["metaData"])).To(ContainSubstring("192.168.0.11"), "the adopted address 192.168.0.10 is not handed out twice")
	g.Eventually(func(g Gomega) {
		tmpl := &infrav1.Metal3DataTemplate{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "tmpl"}, tmpl)).To(Succeed())
		g.Expect(tmpl.Status.Indexes).To(ConsistOf(
			infrav1.IndexEntry{Name: "m0", Index: 0}, infrav1.IndexEntry{Name: "m1", Index: 1}))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	for name, rv := range capm3.secretVersions {
		g.Expect(getSecret(g, ns, name).ResourceVersion).To(Equal(rv), "Secret %s was rewritten", name)
	}
}

type capm3State struct {
	secretVersions map[string]string
}

// leaveAsCAPM3 creates one provisioned machine's objects the way CAPM3 writes them.
func leaveAsCAPM3(t *testing.T, ns string) capm3State {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	create := func(obj client.Object) {
		t.Helper()
		g.Expect(env.Client.Create(ctx, obj)).To(Succeed(), "%T %s", obj, obj.GetName())
	}
	updateStatus := func(obj client.Object) {
		t.Helper()
		g.Expect(env.Client.Status().Update(ctx, obj)).To(Succeed(), "%T %s", obj, obj.GetName())
	}
	clusterLabel := map[string]string{clusterv1.ClusterNameLabel: "c1"}

	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Cluster", Name: "c1",
		}},
	}
	create(cluster)
	cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	updateStatus(cluster)
	create(&infrav1.Metal3Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1", Labels: clusterLabel},
		Spec:       infrav1.Metal3ClusterSpec{ControlPlaneEndpoint: infrav1.APIEndpoint{Host: "192.168.111.249", Port: 6443}, CloudProviderEnabled: ptr.To(true)},
	})

	create(&ipamv1.IPPool{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pool", Labels: clusterLabel},
		Spec: ipamv1.IPPoolSpec{
			NamePrefix: "pool",
			Pools:      []ipamv1.Pool{{Start: addr("192.168.0.10"), End: addr("192.168.0.20")}},
			Prefix:     24,
			Gateway:    addr("192.168.0.1"),
		},
	})

	tmpl := &infrav1.Metal3DataTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tmpl", Labels: clusterLabel},
		Spec: infrav1.Metal3DataTemplateSpec{
			ClusterName: "c1",
			MetaData: &infrav1.MetaData{
				Strings:             []infrav1.MetaDataString{{Key: "role", Value: "worker"}},
				IPAddressesFromPool: []infrav1.FromPool{{Key: "ip", Name: "pool"}},
			},
			NetworkData: &infrav1.NetworkData{
				Links: &infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{{
					Type: "phy", ID: "eth0", MTU: 1500, MACAddress: &infrav1.NetworkLinkEthernetMac{FromHostInterface: ptr.To("eth0")},
				}}},
				Networks: &infrav1.NetworkDataNetworks{IPv4: []infrav1.NetworkDataIPv4{{ID: "prov", Link: "eth0", IPAddressFromIPPool: "pool"}}},
			},
		},
	}
	create(tmpl)
	tmpl.Status.Indexes = []infrav1.IndexEntry{{Name: "m0", Index: 0}}
	updateStatus(tmpl)

	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m0", Labels: clusterLabel},
		Spec: clusterv1.MachineSpec{
			ClusterName: "c1",
			Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To("m0-bootstrap")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Machine", Name: "m0",
			},
			ProviderID: "metal3://" + ns + "/host-0/m0",
		},
	}
	create(machine)
	m3m := &infrav1.Metal3Machine{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: "m0", Labels: clusterLabel,
			Annotations: map[string]string{infrav1.HostAnnotation: ns + "/host-0"},
			Finalizers:  []string{infrav1.MachineFinalizer},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: "m0", UID: machine.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: infrav1.Metal3MachineSpec{
			ProviderID:   "metal3://" + ns + "/host-0/m0",
			Image:        infrav1.Image{URL: "http://images.example.com/ubuntu.qcow2", Checksum: ptr.To("0123456789abcdef")},
			DataTemplate: &corev1.ObjectReference{Name: "tmpl", Namespace: ns},
		},
	}
	create(m3m)

	claim := &infrav1.Metal3DataClaim{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: "m0", Labels: clusterLabel,
			Finalizers: []string{infrav1.DataClaimFinalizer},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3Machine", Name: "m0", UID: m3m.UID,
				Controller: ptr.To(true),
			}},
		},
		Spec: infrav1.Metal3DataClaimSpec{Template: corev1.ObjectReference{Name: "tmpl", Namespace: ns}},
	}
	create(claim)

	data := &infrav1.Metal3Data{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: "tmpl-0", Labels: clusterLabel,
			Finalizers: []string{infrav1.DataFinalizer},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3DataClaim", Name: "m0", UID: claim.UID,
				Controller: ptr.To(true),
			}},
		},
		Spec: infrav1.Metal3DataSpec{
			Index:       ptr.To[int32](0),
			Template:    corev1.ObjectReference{Name: "tmpl", Namespace: ns},
			Claim:       corev1.ObjectReference{Name: "m0", Namespace: ns},
			MetaData:    &corev1.SecretReference{Name: "m0-metadata", Namespace: ns},
			NetworkData: &corev1.SecretReference{Name: "m0-networkdata", Namespace: ns},
		},
	}
	create(data)
	data.Status.Ready = true
	updateStatus(data)
	claim.Status.RenderedData = &corev1.ObjectReference{
		APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3Data", Name: "tmpl-0", Namespace: ns, UID: data.UID,
	}
	updateStatus(claim)

	ipClaim := &ipamv1.IPClaim{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: "tmpl-0-pool", Labels: clusterLabel,
			Finalizers: []string{"ipclaim.ipam.metal3.io"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3Data", Name: "tmpl-0", UID: data.UID, Controller: ptr.To(true),
			}},
		},
		Spec: ipamv1.IPClaimSpec{Pool: corev1.ObjectReference{Name: "pool", Namespace: ns}},
	}
	create(ipClaim)
	create(&ipamv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: "pool-192-168-0-10", Labels: clusterLabel,
			Finalizers: []string{"ipaddress.ipam.metal3.io"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: ipamv1.GroupVersion.String(), Kind: "IPClaim", Name: ipClaim.Name, UID: ipClaim.UID, Controller: ptr.To(true),
			}},
		},
		Spec: ipamv1.IPAddressSpec{
			Claim:   corev1.ObjectReference{Name: ipClaim.Name, Namespace: ns},
			Pool:    corev1.ObjectReference{Name: "pool", Namespace: ns},
			Address: "192.168.0.10", Prefix: 24, Gateway: addr("192.168.0.1"),
		},
	})
	ipClaim.Status.Address = &corev1.ObjectReference{Name: "pool-192-168-0-10", Namespace: ns}
	updateStatus(ipClaim)

	// The Secrets as CAPM3 writes them: its own type, the cluster label only, owned by the data.
	versions := map[string]string{}
	for name, content := range map[string]map[string][]byte{
		"m0-metadata":    {"metaData": []byte("role: worker\nip: 192.168.0.10\n# rendered by CAPM3\n")},
		"m0-networkdata": {"networkData": []byte("links: []\n# rendered by CAPM3\n")},
		"m0-bootstrap":   {"value": []byte("#cloud-config\n")},
	} {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: clusterLabel},
			Type:       infrav1.DataSecretType,
			Data:       content,
		}
		if name != "m0-bootstrap" {
			s.OwnerReferences = []metav1.OwnerReference{{
				APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3Data", Name: "tmpl-0", UID: data.UID, Controller: ptr.To(true),
			}}
		}
		create(s)
		versions[name] = s.ResourceVersion
	}

	// The host, provisioned for m0 and pointing at the Secrets.
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": bmov1.GroupVersion.String(),
		"kind":       "BareMetalHost",
		"metadata":   map[string]any{"name": "host-0", "namespace": ns},
		"spec": map[string]any{
			"online":         true,
			"bootMACAddress": "00:11:22:33:44:00",
			"bmc":            map[string]any{"address": "redfish://10.0.0.1/redfish/v1/Systems/0", "credentialsName": "bmc-0"},
			"consumerRef":    map[string]any{"apiVersion": infrav1.GroupVersion.String(), "kind": "Metal3Machine", "name": "m0", "namespace": ns},
			"image":          map[string]any{"url": "http://images.example.com/ubuntu.qcow2", "checksum": "0123456789abcdef"},
			"userData":       map[string]any{"name": "m0-bootstrap", "namespace": ns},
			"metaData":       map[string]any{"name": "m0-metadata", "namespace": ns},
			"networkData":    map[string]any{"name": "m0-networkdata", "namespace": ns},
		},
	}}
	create(u)
	u.Object["status"] = hostStatus(string(bmov1.StateProvisioned), "00:11:22:33:44:00", true)
	updateStatus(u)
	return capm3State{secretVersions: versions}
}

func hostStatus(state, mac string, on bool) map[string]any {
	return map[string]any{
		"operationalStatus": "OK",
		"errorMessage":      "",
		"poweredOn":         on,
		"provisioning":      map[string]any{"state": state, "bootMode": "UEFI"},
		"hardware": map[string]any{
			"hostname": "h",
			"nics":     []any{map[string]any{"name": "eth0", "mac": mac, "ip": "", "pxe": true}},
		},
	}
}

// newMachine scales up: an available host, and a Machine with its Metal3Machine as Cluster
// API creates them from the MachineDeployment.
func newMachine(t *testing.T, ns, name, hostName string) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	clusterLabel := map[string]string{clusterv1.ClusterNameLabel: "c1"}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": bmov1.GroupVersion.String(),
		"kind":       "BareMetalHost",
		"metadata":   map[string]any{"name": hostName, "namespace": ns},
		"spec": map[string]any{
			"online":         false,
			"bootMACAddress": "00:11:22:33:44:01",
			"bmc":            map[string]any{"address": "redfish://10.0.0.1/redfish/v1/Systems/1", "credentialsName": "bmc-1"},
		},
	}}
	g.Expect(env.Client.Create(ctx, u)).To(Succeed())
	u.Object["status"] = hostStatus(string(bmov1.StateAvailable), "00:11:22:33:44:01", false)
	g.Expect(env.Client.Status().Update(ctx, u)).To(Succeed())

	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: clusterLabel},
		Spec: clusterv1.MachineSpec{
			ClusterName: "c1",
			Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To(name + "-bootstrap")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Machine", Name: name,
			},
		},
	}
	g.Expect(env.Client.Create(ctx, machine)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &infrav1.Metal3Machine{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, Labels: clusterLabel,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: name, UID: machine.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: infrav1.Metal3MachineSpec{
			Image:        infrav1.Image{URL: "http://images.example.com/ubuntu.qcow2", Checksum: ptr.To("0123456789abcdef")},
			DataTemplate: &corev1.ObjectReference{Name: "tmpl", Namespace: ns},
		},
	})).To(Succeed())
}

// startMetalwire runs the image's manager (managertest) with the infrastructure and IPAM
// controllers, and its Secret cache (only Secrets BMO's label selects), watching namespace ns.
func startMetalwire(t *testing.T, ns string) {
	t.Helper()
	managertest.Start(t, env, ns, []controller.Group{controller.Infrastructure, controller.IPAM})
}
