package webhooks_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	utilconversion "sigs.k8s.io/cluster-api/util/conversion"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	infrav1beta1 "github.com/metalwire/metalwire/api/infrastructure/v1beta1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/testenv"
	"github.com/metalwire/metalwire/internal/webhooks"
)

// readManifests reads a multi-document YAML file into unstructured objects.
func readManifests(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		objs = append(objs, u)
	}
	return objs
}

// TestMetal3DevEnvManifestsApplyAsV1beta1: metal3-dev-env's v1beta1 templates apply unchanged
// through the v1beta1 endpoint, read back as v1beta2 with every field moved to its v1beta2
// place, and read back as v1beta1 exactly as written.
func TestMetal3DevEnvManifestsApplyAsV1beta1(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	root, err := testenv.RepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	objs := readManifests(t, filepath.Join(root, "test", "fixtures", "metal3-dev-env", "v1beta1.yaml"))
	g.Expect(objs).To(HaveLen(4))

	for _, u := range objs {
		u.SetNamespace(ns)
		written := u.DeepCopy()
		g.Expect(env.Client.Create(ctx, u)).To(Succeed(), "%s %s", u.GetKind(), u.GetName())

		// Read as v1beta1: the spec is what was written (compared as v1beta1 Go values, so
		// that false and {} written out by the server equal their absence).
		back, err := env.Scheme.New(written.GroupVersionKind())
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(u), back.(client.Object))).To(Succeed())
		want, err := env.Scheme.New(written.GroupVersionKind())
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(written.Object, want)).To(Succeed())
		if dt, ok := want.(*infrav1beta1.Metal3DataTemplate); ok {
			// As in CAPM3's v1beta1 CRD, a link's MTU defaults to 1500.
			for i := range dt.Spec.NetworkData.Links.Ethernets {
				dt.Spec.NetworkData.Links.Ethernets[i].MTU = 1500
			}
		}
		g.Expect(cmp.Diff(specOf(want), specOf(back))).To(BeEmpty(), "%s read back as v1beta1", u.GetKind())
	}

	cluster := &infrav1.Metal3Cluster{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "test1"}, cluster)).To(Succeed())
	g.Expect(cluster.Spec.ControlPlaneEndpoint).To(Equal(infrav1.APIEndpoint{Host: "192.168.111.249", Port: 6443}))
	g.Expect(cluster.CloudProviderEnabled()).To(BeFalse(), "noCloudProvider: true means no cloud provider")

	for _, name := range []string{"test1-controlplane", "test1-workers"} {
		tmpl := &infrav1.Metal3MachineTemplate{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, tmpl)).To(Succeed())
		image := tmpl.Spec.Template.Spec.Image
		g.Expect(image.DiskFormat).To(Equal(ptr.To("raw")), "v1beta1's image.format is v1beta2's image.diskFormat")
		g.Expect(image.ChecksumType).To(Equal(ptr.To("sha256")))
		g.Expect(tmpl.Spec.Template.Spec.DataTemplate.Name).To(Equal(name + "-template"))
	}

	dt := &infrav1.Metal3DataTemplate{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "test1-workers-template"}, dt)).To(Succeed())
	g.Expect(dt.Spec.ClusterName).To(Equal("test1"))
	g.Expect(dt.Spec.MetaData.IPAddressesFromPool).To(Equal([]infrav1.FromPool{{Key: "provisioningIP", Name: "provisioning-pool", APIGroup: "ipam.metal3.io", Kind: "IPPool"}}),
		"ipAddressesFromIPPool is v1beta2's ipAddressesFromPool")
	g.Expect(dt.Spec.MetaData.PrefixesFromPool).To(Equal([]infrav1.FromPool{{Key: "provisioningCIDR", Name: "provisioning-pool", APIGroup: "ipam.metal3.io", Kind: "IPPool"}}))
	g.Expect(dt.Spec.MetaData.ObjectNames).To(HaveLen(3))
	links := dt.Spec.NetworkData.Links
	g.Expect(links.Ethernets).To(HaveLen(2))
	g.Expect(links.Vlans).To(ConsistOf(infrav1.NetworkDataLinkVlan{
		VlanID: ptr.To[int32](100), ID: "vlan100", MTU: 1500, VlanLink: "eth0",
		MACAddress: &infrav1.NetworkLinkEthernetMac{FromHostInterface: ptr.To("eth0")},
	}))
	nets := dt.Spec.NetworkData.Networks
	g.Expect(nets.IPv4).To(HaveLen(1))
	g.Expect(nets.IPv4[0].IPAddressFromIPPool).To(Equal("externalv4-pool"))
	g.Expect(nets.IPv4[0].Routes[0].Gateway.FromIPPool).To(Equal(ptr.To("externalv4-pool")))
	g.Expect(nets.IPv6[0].Routes[0].Network).To(Equal(infrav1.IPv6Address("0::0")))
	g.Expect(dt.Spec.NetworkData.Services.DNS).To(Equal([]infrav1.IPAddress{"8.8.8.8", "2001:4860:4860::8888"}))
}

// TestV1beta2OnlyFieldsSurviveAV1beta1Client: an object written as v1beta2 with fields v1beta1
// has no place for (a bridge, a MAC from the boot interface, an address without a pool, bond
// parameters in order), read and written back whole by a v1beta1 client (as `kubectl edit`
// or a GitOps tool on the old version would), keeps every one of them.
func TestV1beta2OnlyFieldsSurviveAV1beta1Client(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	start := infrav1.IPAddress("192.168.10.10")
	dt := &infrav1.Metal3DataTemplate{}
	dt.Name, dt.Namespace = "rich", ns
	dt.Spec.ClusterName = "c1"
	dt.Spec.MetaData = &infrav1.MetaData{
		IPAddresses: []infrav1.MetaDataIPAddress{{Key: "addr", Start: &start, Step: 2}},
	}
	dt.Spec.NetworkData = &infrav1.NetworkData{Links: &infrav1.NetworkDataLinks{
		Ethernets: []infrav1.NetworkDataLinkEthernet{
			{Type: "phy", ID: "eth0", MTU: 9000, MACAddress: &infrav1.NetworkLinkEthernetMac{FromBootMAC: ptr.To(true)}},
			{Type: "phy", ID: "eth1", MTU: 9000, MACAddress: &infrav1.NetworkLinkEthernetMac{FromHostInterface: ptr.To("eth1")}},
		},
		Bonds: []infrav1.NetworkDataLinkBond{{
			BondMode: "802.3ad", ID: "bond0", MTU: 9000, BondLinks: []infrav1.LinkID{"eth0", "eth1"},
			Parameters: []infrav1.NetworkDataLinkBondParam{
				{Name: "miimon", Value: &apiextensionsv1.JSON{Raw: []byte("100")}},
				{Name: "lacp_rate", Value: &apiextensionsv1.JSON{Raw: []byte(`"fast"`)}},
			},
		}},
		Bridges: []infrav1.NetworkDataLinkBridge{{ID: "br0", MTU: 9000, BridgeLinks: []infrav1.LinkID{"bond0"}}},
	}}
	g.Expect(env.Client.Create(ctx, dt)).To(Succeed())
	before := &infrav1.Metal3DataTemplate{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(dt), before)).To(Succeed())

	// A v1beta1 client reads it, changes a label, and writes it back whole.
	old := &unstructured.Unstructured{}
	old.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta1")
	old.SetKind("Metal3DataTemplate")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(dt), old)).To(Succeed())
	g.Expect(old.GetAnnotations()).To(HaveKey(utilconversion.DataAnnotation), "v1beta2's fields travel in the annotation")
	_, hasBridges, _ := unstructured.NestedFieldNoCopy(old.Object, "spec", "networkData", "links", "bridges")
	g.Expect(hasBridges).To(BeFalse(), "v1beta1 has no bridges")
	old.SetLabels(map[string]string{"edited": "by-v1beta1"})
	g.Expect(env.Client.Update(ctx, old)).To(Succeed())

	after := &infrav1.Metal3DataTemplate{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(dt), after)).To(Succeed())
	g.Expect(after.Labels).To(HaveKeyWithValue("edited", "by-v1beta1"))
	g.Expect(after.Annotations).NotTo(HaveKey(utilconversion.DataAnnotation), "the annotation is consumed on the way back")
	g.Expect(after.Spec).To(Equal(before.Spec), "nothing of the v1beta2 spec is lost")
	g.Expect(after.Spec.NetworkData.Links.Bridges).To(HaveLen(1))
	g.Expect(after.Spec.NetworkData.Links.Ethernets[0].MACAddress.FromBootMAC).To(Equal(ptr.To(true)))
}

// TestEveryConvertibleKindIsServedInBothVersions: the CRD of every kind SetupConversion serves
// lists v1beta1 (served) and v1beta2 (served, stored), and converts through the webhook.
func TestEveryConvertibleKindIsServedInBothVersions(t *testing.T) {
	g := NewWithT(t)
	for _, obj := range webhooks.ConvertibleKinds() {
		gvks, _, err := env.Scheme.ObjectKinds(obj)
		g.Expect(err).NotTo(HaveOccurred())
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("apiextensions.k8s.io/v1")
		u.SetKind("CustomResourceDefinition")
		name := crdName(gvks[0].Kind)
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: name}, u)).To(Succeed())
		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd)).To(Succeed())
		versions := map[string][2]bool{}
		for _, v := range crd.Spec.Versions {
			versions[v.Name] = [2]bool{v.Served, v.Storage}
		}
		g.Expect(versions).To(Equal(map[string][2]bool{"v1beta1": {true, false}, "v1beta2": {true, true}}), name)
		g.Expect(crd.Spec.Conversion.Strategy).To(Equal(apiextensionsv1.WebhookConverter), name)
	}
}

// specOf returns the spec field of a typed object.
func specOf(obj runtime.Object) any {
	return reflect.ValueOf(obj).Elem().FieldByName("Spec").Interface()
}

func crdName(kind string) string {
	plural := map[string]string{"Metal3Data": "metal3datas"}[kind]
	if plural == "" {
		plural = toLower(kind) + "s"
	}
	return plural + ".infrastructure.cluster.x-k8s.io"
}

func toLower(s string) string { return string(bytes.ToLower([]byte(s))) }

// TestATemplateOfTenThousandMachinesReadsAsV1beta1: a template's status lists every claim, and
// a v1beta1 client still reads it (and the API server's v1beta1 watch cache still holds it) at
// the size of a large site. Its indexes are v1beta1's own map, so they need no copy in the
// annotation that carries v1beta2's fields: with one, the annotations passed the API server's
// 256 KiB limit near 7,000 claims and every v1beta1 read of the template failed.
func TestATemplateOfTenThousandMachinesReadsAsV1beta1(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	dt := &infrav1.Metal3DataTemplate{}
	dt.Name, dt.Namespace = "workers", ns
	dt.Spec.ClusterName = "c1"
	g.Expect(env.Client.Create(ctx, dt)).To(Succeed())
	const n = 10000
	for i := range n {
		dt.Status.Indexes = append(dt.Status.Indexes, infrav1.IndexEntry{Name: fmt.Sprintf("site-a-rack-%03d-worker-%05d", i/40, i), Index: int32(i)})
	}
	g.Expect(env.Client.Status().Update(ctx, dt)).To(Succeed())

	old := &unstructured.Unstructured{}
	old.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta1")
	old.SetKind("Metal3DataTemplate")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(dt), old)).To(Succeed())
	indexes, _, _ := unstructured.NestedMap(old.Object, "status", "indexes")
	g.Expect(indexes).To(HaveLen(n))
	g.Expect(indexes).To(HaveKeyWithValue("site-a-rack-249-worker-09999", int64(9999)))

	// A v1beta1 client writes its status back whole: nothing is lost or reordered.
	old.SetLabels(map[string]string{"edited": "by-v1beta1"})
	g.Expect(env.Client.Update(ctx, old)).To(Succeed())
	after := &infrav1.Metal3DataTemplate{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(dt), after)).To(Succeed())
	g.Expect(after.Labels).To(HaveKeyWithValue("edited", "by-v1beta1"))
	g.Expect(after.Status.Indexes).To(Equal(dt.Status.Indexes))
}
