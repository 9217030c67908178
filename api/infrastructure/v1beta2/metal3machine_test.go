package v1beta2_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// fullMachineSpec sets every spec field, so a round trip shows none is lost or renamed.
func fullMachineSpec() infrav1.Metal3MachineSpec {
	return infrav1.Metal3MachineSpec{
		ProviderID: "metal3://default/host-0/m3m-roundtrip",
		Image: infrav1.Image{
			URL:          "http://images.example.com/ubuntu.qcow2",
			Checksum:     ptr.To("http://images.example.com/ubuntu.qcow2.sha256sum"),
			ChecksumType: ptr.To("sha256"),
			DiskFormat:   ptr.To("qcow2"),
		},
		CustomDeploy: &infrav1.CustomDeploy{Method: "install_coreos"},
		UserData:     &corev1.SecretReference{Name: "m-0-userdata", Namespace: "default"},
		HostSelector: infrav1.HostSelector{
			MatchLabels: map[string]string{"rack": "r1"},
			MatchExpressions: []infrav1.HostSelectorRequirement{
				{Key: "cores", Operator: infrav1.HostSelectorOpGreaterThan, Values: []string{"8"}},
				{Key: "gpu", Operator: infrav1.HostSelectorOpDoesNotExistLong},
			},
		},
		DataTemplate:          &corev1.ObjectReference{Kind: "Metal3DataTemplate", Name: "workers", Namespace: "default"},
		MetaData:              &corev1.SecretReference{Name: "m-0-metadata"},
		NetworkData:           &corev1.SecretReference{Name: "m-0-networkdata"},
		AutomatedCleaningMode: ptr.To(infrav1.CleaningModeDisabled),
		FailureDomain:         "rack-1",
	}
}

func TestMetal3MachineRoundTrip(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	now := metav1.NewTime(time.Now().Truncate(time.Second)) // RFC 3339 keeps seconds only

	given := &infrav1.Metal3Machine{
		ObjectMeta: metav1.ObjectMeta{Name: "m3m-roundtrip", Namespace: "default"},
		Spec:       fullMachineSpec(),
	}
	g.Expect(env.Client.Create(ctx, given)).To(Succeed())

	got := &infrav1.Metal3Machine{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(given), got)).To(Succeed())
	g.Expect(got.Spec).To(Equal(fullMachineSpec()))

	got.Status = infrav1.Metal3MachineStatus{
		Initialization: infrav1.Metal3MachineInitializationStatus{Provisioned: ptr.To(true)},
		Addresses: clusterv1.MachineAddresses{
			{Type: clusterv1.MachineInternalIP, Address: "192.168.111.20"},
			{Type: clusterv1.MachineHostName, Address: "host-0"},
		},
		UserData:     &corev1.SecretReference{Name: "m-0-userdata", Namespace: "default"},
		RenderedData: &corev1.ObjectReference{Kind: "Metal3Data", Name: "workers-0", Namespace: "default"},
		MetaData:     &corev1.SecretReference{Name: "m3m-roundtrip-metadata-0", Namespace: "default"},
		NetworkData:  &corev1.SecretReference{Name: "m3m-roundtrip-networkdata-0", Namespace: "default"},
		Conditions: []metav1.Condition{
			{Type: infrav1.Metal3MachineReadyCondition, Status: metav1.ConditionTrue, Reason: infrav1.Metal3MachineReadyReason, LastTransitionTime: now},
			{Type: infrav1.AssociateBareMetalHostCondition, Status: metav1.ConditionTrue, Reason: infrav1.AssociateBareMetalHostSuccessReason, LastTransitionTime: now},
		},
		LastUpdated: &now,
	}
	g.Expect(env.Client.Status().Update(ctx, got)).To(Succeed())

	again := &infrav1.Metal3Machine{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(given), again)).To(Succeed())
	g.Expect(again.Status).To(Equal(got.Status))
	g.Expect(again.Spec).To(Equal(fullMachineSpec()))
}

func TestMetal3MachineTemplateRoundTrip(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()

	given := &infrav1.Metal3MachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "m3mt-roundtrip", Namespace: "default"},
		Spec: infrav1.Metal3MachineTemplateSpec{
			Template: infrav1.Metal3MachineTemplateResource{
				ObjectMeta: clusterv1.ObjectMeta{Labels: map[string]string{"pool": "workers"}},
				Spec:       fullMachineSpec(),
			},
			NodeReuse: ptr.To(true),
		},
	}
	g.Expect(env.Client.Create(ctx, given)).To(Succeed())
	got := &infrav1.Metal3MachineTemplate{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(given), got)).To(Succeed())
	g.Expect(got.Spec).To(Equal(given.Spec))
}

func TestMetal3MachineTemplateNodeReuseDefaultsToFalse(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()

	// Written without nodeReuse, as kubectl would send it.
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2",
		"kind":       "Metal3MachineTemplate",
		"metadata":   map[string]any{"name": "m3mt-default", "namespace": "default"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"customDeploy": map[string]any{"method": "install"},
		}}},
	}}
	g.Expect(env.Client.Create(ctx, u)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(u), u)).To(Succeed())
	reuse, found, err := unstructured.NestedBool(u.Object, "spec", "nodeReuse")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(found).To(BeTrue(), "nodeReuse is stored with its default")
	g.Expect(reuse).To(BeFalse())
}

// kubectl get shows these columns; read them as kubectl does, as a Table.
func TestMetal3MachinePrinterColumns(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()

	m := &infrav1.Metal3Machine{
		ObjectMeta: metav1.ObjectMeta{
			Name: "m3m-columns", Namespace: "default",
			Labels:      map[string]string{clusterv1.ClusterNameLabel: "cluster-a"},
			Annotations: map[string]string{infrav1.HostAnnotation: "default/host-7"},
		},
		Spec: infrav1.Metal3MachineSpec{ProviderID: "metal3://default/host-7/m3m-columns", CustomDeploy: &infrav1.CustomDeploy{Method: "install"}},
	}
	g.Expect(env.Client.Create(ctx, m)).To(Succeed())
	m.Status.Initialization.Provisioned = ptr.To(true)
	m.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "NotReady", LastTransitionTime: metav1.Now()}}
	g.Expect(env.Client.Status().Update(ctx, m)).To(Succeed())

	row := tableRow(g, "metal3machines", "m3m-columns")
	g.Expect(row).To(HaveKeyWithValue("Cluster", "cluster-a"))
	g.Expect(row).To(HaveKeyWithValue("Provisioned", true))
	g.Expect(row).To(HaveKeyWithValue("Ready", "False"))
	g.Expect(row).To(HaveKeyWithValue("ProviderID", "metal3://default/host-7/m3m-columns"))
	g.Expect(row).To(HaveKeyWithValue("BareMetalHost", "default/host-7"))
	g.Expect(row).To(HaveKey("Age"))
}

func TestMetal3ClusterPrinterColumns(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()

	c := &infrav1.Metal3Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "m3c-columns", Namespace: "default", Labels: map[string]string{clusterv1.ClusterNameLabel: "cluster-a"}},
		Spec:       infrav1.Metal3ClusterSpec{ControlPlaneEndpoint: infrav1.APIEndpoint{Host: "192.168.111.249"}},
	}
	g.Expect(env.Client.Create(ctx, c)).To(Succeed())

	row := tableRow(g, "metal3clusters", "m3c-columns")
	g.Expect(row).To(HaveKeyWithValue("Cluster", "cluster-a"))
	g.Expect(row).To(HaveKeyWithValue("Endpoint", "192.168.111.249"))
	g.Expect(row).To(HaveKeyWithValue("Provisioned", BeNil()), "not provisioned yet: an empty cell")
	g.Expect(row).To(HaveKey("Age"))
}

// Cluster API v1beta2 finds which version of an infrastructure kind implements its contract
// from a label on the CRD; without it, a Cluster cannot use Metal3Cluster at all.
func TestCRDsDeclareTheClusterAPIContract(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"metal3clusters", "metal3clustertemplates", "metal3machines", "metal3machinetemplates"} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			crd := &unstructured.Unstructured{}
			crd.SetAPIVersion("apiextensions.k8s.io/v1")
			crd.SetKind("CustomResourceDefinition")
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: name + "." + infrav1.GroupVersion.Group}, crd)).To(Succeed())
			g.Expect(crd.GetLabels()).To(HaveKeyWithValue("cluster.x-k8s.io/v1beta2", "v1beta2"))
			categories, _, _ := unstructured.NestedStringSlice(crd.Object, "spec", "names", "categories")
			g.Expect(categories).To(ContainElement("cluster-api"))
		})
	}
}

// tableRow GETs one object as a server-side Table, as kubectl get does, and returns its cells
// by column name.
func tableRow(g Gomega, resource, name string) map[string]any {
	httpClient, err := rest.HTTPClientFor(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	url := strings.TrimSuffix(env.Config.Host, "/") + "/apis/" + infrav1.GroupVersion.String() + "/namespaces/default/" + resource + "/" + name
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, http.NoBody)
	g.Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := httpClient.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK), url+": "+string(body))

	table := &metav1.Table{}
	g.Expect(json.Unmarshal(body, table)).To(Succeed())
	g.Expect(table.Rows).To(HaveLen(1))
	row := map[string]any{}
	for i, col := range table.ColumnDefinitions {
		row[col.Name] = table.Rows[0].Cells[i]
	}
	return row
}
