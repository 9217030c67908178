package metal3data_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/schematest"
	"github.com/metalwire/metalwire/pkg/render"
	"github.com/metalwire/metalwire/pkg/render/osnetconfig"
)

// goldenDir holds pkg/render's hand-checked case with every kind of pool: the controller must
// gather the same facts from the API (index 4, the Machine and Metal3Machine names, the host's
// NICs, labels and annotations, an address from each pool) and write exactly those documents.
const goldenDir = "../../../pkg/render/testdata/golden/pools"

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(goldenDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRenderedSecretsMatchGolden runs the whole chain — claims, index allocation, IPClaims
// served by the IPAM controller, an IPAddressClaim served by another provider (played by the
// test), rendering — and compares the Secrets with the golden output and the Ironic schema. It
// then deletes a Secret and expects it back, byte for byte.
func TestRenderedSecretsMatchGolden(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	const ns = "cluster-a" // the golden documents name it
	createNamespace(t, ns)
	startManager(t, ns, managerOptions{})

	pool(t, ns, "provisioning", "172.22.0.24", "172.22.0.24", 24, "", "172.22.0.1")
	pool(t, ns, "external6", "2001:db8:100::24", "2001:db8:100::24", 64, "2001:db8:100::1", "2001:db8:100::1")
	pool(t, ns, "storage-r12", "10.12.0.24", "10.12.0.24", 22, "")

	decoded, err := render.DecodeTemplate(readGolden(t, "template.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	template(t, ns, "workers", infrav1.Metal3DataTemplateSpec{ClusterName: "cluster-a", MetaData: decoded.MetaData, NetworkData: decoded.NetworkData})

	// Indexes 0..3 go to machines without hosts, so the golden machine gets index 4.
	for i := range 4 {
		machine(t, ns, "filler-"+string(rune('0'+i)), "workers", machineOpts{})
		NewWithT(t).Eventually(func(g Gomega) {
			g.Expect(getClaim(g, ns, "filler-"+string(rune('0'+i))).Status.RenderedData).NotTo(BeNil())
		}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	}

	h, err := render.DecodeHost(readGolden(t, "host.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	nics := []string{}
	for _, n := range h.Status.HardwareDetails.NIC {
		nics = append(nics, n.Name+"="+n.MAC)
	}
	host(t, ns, h.Name, h.Labels, h.Annotations, h.Spec.BootMACAddress, nics...)
	machine(t, ns, "workers-m3m-7x2kq", "workers", machineOpts{
		machine: "workers-7x2kq", host: h.Name, machineAnnotations: map[string]string{"example.com/role": "worker"},
	})

	serveCAPIClaim(t, ns, "workers-4-external", "10.0.100.24", 24, "10.0.100.1")

	data := renderedData(t, ns, "workers-m3m-7x2kq")
	g.Expect(data.Name).To(Equal("workers-4"))
	g.Expect(data.Spec.MetaData).To(Equal(&corev1.SecretReference{Name: "workers-m3m-7x2kq-metadata-4", Namespace: ns}))
	g.Expect(data.Spec.NetworkData).To(Equal(&corev1.SecretReference{Name: "workers-m3m-7x2kq-networkdata-4", Namespace: ns}))

	md := getSecret(g, ns, "workers-m3m-7x2kq-metadata-4")
	nd := getSecret(g, ns, "workers-m3m-7x2kq-networkdata-4")
	g.Expect(string(md.Data["metaData"])).To(Equal(string(readGolden(t, "metadata.yaml"))))
	g.Expect(string(nd.Data["networkData"])).To(Equal(string(readGolden(t, "network_data.yaml"))))
	for _, s := range []*corev1.Secret{md, nd} {
		g.Expect(s.Type).To(Equal(corev1.SecretType("infrastructure.cluster.x-k8s.io/secret")))
		g.Expect(s.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "cluster-a"))
		owner := metav1.GetControllerOf(s)
		g.Expect(owner).NotTo(BeNil())
		g.Expect(owner.Kind + "/" + owner.Name).To(Equal("Metal3Data/workers-4"))
	}
	validateNetworkData(t, nd.Data["networkData"])
	// os-net-config beside it: the same documents as metalwire render, valid for os-net-config.
	g.Expect(nd.Data).To(HaveLen(3), "networkData, osNetConfig and osNetConfigMapping")
	g.Expect(string(nd.Data[render.OSNetConfigKey])).To(Equal(string(readGolden(t, "os-net-config.yaml"))))
	g.Expect(string(nd.Data[render.OSNetConfigMappingKey])).To(Equal(string(readGolden(t, "os-net-config-mapping.yaml"))))
	g.Expect(osnetconfig.Validate(nd.Data[render.OSNetConfigKey])).To(Succeed())
	g.Expect(osnetconfig.ValidateMapping(nd.Data[render.OSNetConfigMappingKey])).To(Succeed())

	claim := getClaim(g, ns, "workers-m3m-7x2kq")
	g.Expect(condition(claim.Status.Conditions, "Ready").Status).To(Equal(metav1.ConditionTrue))

	// A deleted Secret comes back identical.
	g.Expect(env.Client.Delete(ctx, nd)).To(Succeed())
	NewWithT(t).Eventually(func(g Gomega) {
		again := getSecret(g, ns, "workers-m3m-7x2kq-networkdata-4")
		g.Expect(again.UID).NotTo(Equal(nd.UID))
		g.Expect(again.Data).To(Equal(nd.Data))
		g.Expect(again.Type).To(Equal(nd.Type))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// serveCAPIClaim plays a Cluster API IPAM provider for one IPAddressClaim: it waits for the
// claim, creates the IPAddress and points the claim at it.
func serveCAPIClaim(t *testing.T, ns, name, address string, prefix int32, gateway string) {
	t.Helper()
	ctx := context.Background()
	c := &capiipamv1.IPAddressClaim{}
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, c)).To(Succeed())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g := NewWithT(t)
	a := &capiipamv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: c.Spec.PoolRef.Name + "-" + strings.ReplaceAll(address, ".", "-")},
		Spec: capiipamv1.IPAddressSpec{
			ClaimRef: capiipamv1.IPAddressClaimReference{Name: c.Name},
			PoolRef:  c.Spec.PoolRef,
			Address:  address, Prefix: ptr.To(prefix), Gateway: gateway,
		},
	}
	g.Expect(env.Client.Create(ctx, a)).To(Succeed())
	c.Status.AddressRef = capiipamv1.IPAddressReference{Name: a.Name}
	g.Expect(env.Client.Status().Update(ctx, c)).To(Succeed())
}

// validateNetworkData checks a networkData Secret's YAML against the schema Ironic enforces.
func validateNetworkData(t *testing.T, doc []byte) {
	t.Helper()
	if err := schematest.ValidateNetworkData(t, doc); err != nil {
		t.Fatalf("networkData is not valid for Ironic: %v", err)
	}
}
