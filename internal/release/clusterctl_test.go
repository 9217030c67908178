package release

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	"sigs.k8s.io/cluster-api/util/contract"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"
)

const testVersion = "v0.1.0"

// localRepository writes the release as clusterctl's local repository layout,
// <dir>/infrastructure-metalwire/<version>/, and a clusterctl.yaml naming it with vars set; it
// returns the config's path.
func localRepository(t *testing.T, a *Artifacts, vars map[string]string, extra ...string) string {
	t.Helper()
	dir := t.TempDir()
	versionDir := filepath.Join(dir, "infrastructure-"+ProviderName, testVersion)
	if err := a.Write(versionDir); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("providers:\n  - name: %s\n    type: InfrastructureProvider\n    url: file://%s\n", ProviderName, filepath.Join(versionDir, ComponentsFile))
	for k, v := range vars {
		cfg += fmt.Sprintf("%s: %q\n", k, v)
	}
	for _, e := range extra {
		cfg += e
	}
	path := filepath.Join(dir, "clusterctl.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	// clusterctl keeps its state below the user's config directory; keep it in the test's.
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
	t.Setenv("HOME", dir)
	return path
}

func makeArtifacts(t *testing.T) *Artifacts {
	t.Helper()
	a, err := Make(Options{Root: filepath.Join("..", ".."), Image: "registry.example.com/metalwire/manager:" + testVersion})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestClusterctlGenerateProvider reads the components as `clusterctl generate provider
// --infrastructure metalwire` does, through clusterctl's own library and a local repository.
func TestClusterctlGenerateProvider(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	a := makeArtifacts(t)

	// The variables a user may set, as `clusterctl generate provider --describe` lists them.
	c, err := client.New(ctx, localRepository(t, a, nil))
	// `clusterctl generate provider --describe` lists variables without substituting them.
	g.Expect(err).NotTo(HaveOccurred())
	listed, err := c.GenerateProvider(ctx, ProviderName+":"+testVersion, clusterctlv1.InfrastructureProviderType, client.ComponentsOptions{SkipTemplateProcess: true})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(listed.Variables()).To(ContainElements("METALWIRE_CONCURRENCY", "METALWIRE_SYNC_PERIOD", "METALWIRE_IP_REUSE"))
	g.Expect(listed.TargetNamespace()).To(Equal("metalwire-system"))

	// With a variable set, the components come out substituted and labelled, and the image
	// follows clusterctl's image override for the provider.
	c, err = client.New(ctx, localRepository(t, a, map[string]string{"METALWIRE_CONCURRENCY": "25"},
		"images:\n  infrastructure-metalwire:\n    repository: mirror.example.com/metal\n"))
	g.Expect(err).NotTo(HaveOccurred())
	comp, err := c.GenerateProvider(ctx, ProviderName+":"+testVersion, clusterctlv1.InfrastructureProviderType, client.ComponentsOptions{TargetNamespace: "metal-ops"})
	g.Expect(err).NotTo(HaveOccurred())
	kinds := map[string]int{}
	var deployment *unstructured.Unstructured
	for _, o := range comp.Objs() {
		kinds[o.GetKind()]++
		g.Expect(o.GetLabels()).To(HaveKeyWithValue("cluster.x-k8s.io/provider", "infrastructure-metalwire"), "%s %s", o.GetKind(), o.GetName())
		if o.GetKind() == "Deployment" {
			deployment = o.DeepCopy()
		}
		if o.GetKind() == "CustomResourceDefinition" && o.GetName() == "metal3machines.infrastructure.cluster.x-k8s.io" {
			// clusterctl moves the conversion webhook and the CA injection with the namespace.
			svcNS, _, _ := unstructured.NestedString(o.Object, "spec", "conversion", "webhook", "clientConfig", "service", "namespace")
			g.Expect(svcNS).To(Equal("metal-ops"))
			g.Expect(o.GetAnnotations()).To(HaveKeyWithValue("cert-manager.io/inject-ca-from", "metal-ops/metalwire-serving-cert"))
			g.Expect(o.GetLabels()).To(HaveKeyWithValue("cluster.x-k8s.io/v1beta2", "v1beta2"))
		}
	}
	// 10 infrastructure (with the two remediation kinds), 3 ipam.metal3.io, 3 network.metalwire.io kinds.
	g.Expect(kinds).To(HaveKeyWithValue("CustomResourceDefinition", 16))
	g.Expect(kinds).To(HaveKey("Namespace"))
	g.Expect(kinds).To(HaveKey("ServiceAccount"))
	g.Expect(kinds).To(HaveKey("ClusterRole"))
	g.Expect(kinds).To(HaveKey("ClusterRoleBinding"))
	g.Expect(kinds).To(HaveKey("Role"))
	g.Expect(kinds).To(HaveKey("RoleBinding"))
	g.Expect(kinds).To(HaveKey("Service"))
	g.Expect(kinds).To(HaveKey("Issuer"))
	g.Expect(kinds).To(HaveKey("Certificate"))
	g.Expect(deployment).NotTo(BeNil())
	containers, _, _ := unstructured.NestedSlice(deployment.Object, "spec", "template", "spec", "containers")
	g.Expect(containers).To(HaveLen(1))
	manager := containers[0].(map[string]any)
	g.Expect(manager["image"]).To(Equal("mirror.example.com/metal/manager:" + testVersion))
	g.Expect(manager["args"]).To(ContainElement("--concurrency=25"))
}

// TestClusterctlGenerateCluster makes a cluster from our template as `clusterctl generate
// cluster` does, with the variables it sets from its flags and the ones a user sets.
func TestClusterctlGenerateCluster(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	a := makeArtifacts(t)
	c, err := client.New(ctx, localRepository(t, a, map[string]string{
		"CONTROL_PLANE_ENDPOINT_HOST": "10.0.0.249",
		"IMAGE_URL":                   "http://images.lab/ubuntu.qcow2",
		"IMAGE_CHECKSUM":              "http://images.lab/ubuntu.qcow2.sha256sum",
	}))
	g.Expect(err).NotTo(HaveOccurred())
	tmpl, err := c.GetClusterTemplate(ctx, client.GetClusterTemplateOptions{
		ProviderRepositorySource: &client.ProviderRepositorySourceOptions{InfrastructureProvider: ProviderName + ":" + testVersion},
		ClusterName:              "lab",
		TargetNamespace:          "lab-ns",
		KubernetesVersion:        "v1.33.2",
		WorkerMachineCount:       ptr.To[int64](5),
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tmpl.Variables()).To(ContainElements("CLUSTER_NAME", "NAMESPACE", "KUBERNETES_VERSION", "WORKER_MACHINE_COUNT", "CONTROL_PLANE_ENDPOINT_HOST", "IMAGE_URL", "IMAGE_CHECKSUM"))
	seen := map[string]*unstructured.Unstructured{}
	for _, o := range tmpl.Objs() {
		g.Expect(o.GetNamespace()).To(Equal("lab-ns"), "%s %s", o.GetKind(), o.GetName())
		seen[o.GetKind()+"/"+o.GetName()] = o.DeepCopy()
	}
	g.Expect(seen).To(HaveKey("Cluster/lab"))
	g.Expect(seen).To(HaveKey("Metal3Cluster/lab"))
	g.Expect(seen).To(HaveKey("Metal3DataTemplate/lab-nodes"))
	g.Expect(seen).To(HaveKey("IPPool/lab-baremetal-v4"))
	g.Expect(seen).To(HaveKey("Machine/lab-control-plane-0"))
	md := seen["MachineDeployment/lab-workers"]
	g.Expect(md).NotTo(BeNil())
	// clusterctl's objects hold numbers as JSON decodes them; compare them as a reader sees them.
	replicas, _, _ := unstructured.NestedFieldNoCopy(md.Object, "spec", "replicas")
	g.Expect(fmt.Sprint(replicas)).To(Equal("5"))
	version, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "version")
	g.Expect(version).To(Equal("v1.33.2"))
	host, _, _ := unstructured.NestedString(seen["Metal3Cluster/lab"].Object, "spec", "controlPlaneEndpoint", "host")
	g.Expect(host).To(Equal("10.0.0.249"))
	port, _, _ := unstructured.NestedFieldNoCopy(seen["Metal3Cluster/lab"].Object, "spec", "controlPlaneEndpoint", "port")
	g.Expect(fmt.Sprint(port)).To(Equal("6443"))
	// The example's cluster joins dev mode's simulated switch; a generated one joins none unless
	// CLUSTER_NETWORK says so, or its machines would wait for a switch it does not have.
	cn, found, _ := unstructured.NestedString(seen["Metal3Cluster/lab"].Object, "spec", "clusterNetwork")
	g.Expect(found).To(BeTrue())
	g.Expect(cn).To(BeEmpty())
	// The label key of the host selector stays the example's: only names take the cluster's name.
	out, err := tmpl.Yaml()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(out)).To(ContainSubstring("demo.metalwire.io/role"))
	g.Expect(string(out)).NotTo(ContainSubstring("${"))
}

// clusterctl init and upgrade refuse a provider whose CRD is not named as Cluster API names a
// kind's CRD (<plural>.<group>, its own plural rules) unless the CRD says to skip the check.
func TestCRDNamesPassClusterctlsCheck(t *testing.T) {
	g := NewWithT(t)
	objs, err := utilyaml.ToUnstructured(makeArtifacts(t).Components)
	g.Expect(err).NotTo(HaveOccurred())
	n := 0
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		n++
		group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
		if _, skip := o.GetAnnotations()[clusterctlv1.SkipCRDNamePreflightCheckAnnotation]; !skip {
			g.Expect(o.GetName()).To(Equal(contract.CalculateCRDName(group, kind)), "clusterctl init refuses CRD %s: name it so, or annotate it %s", o.GetName(), clusterctlv1.SkipCRDNamePreflightCheckAnnotation)
		}
	}
	g.Expect(n).To(BeNumerically(">", 0))
}
