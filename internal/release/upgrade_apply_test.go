package release

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	clusterctl "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	clusterctllog "sigs.k8s.io/cluster-api/cmd/clusterctl/log"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/internal/testenv"
)

const (
	imageRepo  = "registry.example.com/metalwire/manager:"
	userNS     = "lab"
	deployment = "metalwire-controller-manager"
	servingSec = "metalwire-webhook-service-cert"
	// dataTemplates is the CRD v0.1.0 here lacks a field of (see withoutOSNetConfig).
	dataTemplates = "metal3datatemplates.infrastructure.cluster.x-k8s.io"
)

// TestClusterctlUpgradeApply installs v0.1.0 with `clusterctl init` and upgrades it to v0.2.0
// with `clusterctl upgrade apply`, both through clusterctl's own library from a local
// repository, on a test API server standing in for a management cluster (clusterStandIn runs
// what the test API server lacks: cert-manager's issuing and CA injection, the Deployment's
// Pod, which is the manager binary built from cmd/manager running as the ServiceAccount). It
// checks what a user notices: clusterctl succeeds, its inventory says v0.2.0, the Deployment
// runs the v0.2.0 image, the CRDs are v0.2.0's, every object made under v0.1.0 is still there
// and unchanged through v1beta1 and v1beta2, and the new manager carries on with them.
//
// Both releases are this commit's components (their image tags differ); v0.1.0 stands for an
// older release by lacking one field, Metal3DataTemplate's spec.osNetConfig, in its CRD, so
// that the CRD replacement shows: v0.1.0 drops the field, v0.2.0 keeps it.
func TestClusterctlUpgradeApply(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	binary := buildManager(t)
	env, err := testenv.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })

	// A management cluster before `clusterctl init --infrastructure metalwire`: Cluster API's
	// and BMO's CRDs and cert-manager's API, none of metalwire's (the test API server starts
	// with them: they go).
	deleteCRDs(ctx, t, env.Client, metalwireGroups)
	g.Expect(installYAML(ctx, env.Client, certManagerAPI)).To(Succeed())

	hooks := env.Webhooks
	convertURL := "https://" + net.JoinHostPort(hooks.LocalServingHost, strconv.Itoa(hooks.LocalServingPort)) + "/convert"
	dir := t.TempDir()
	v010 := upgradeRelease(t, "v0.1.0", convertURL, ReleaseSeries, withoutOSNetConfig)
	v020 := upgradeRelease(t, "v0.2.0", convertURL, append(slices.Clone(ReleaseSeries), Series{Major: 0, Minor: 2, Contract: "v1beta2"}), nil)
	g.Expect(v010.Write(filepath.Join(dir, "infrastructure-"+ProviderName, "v0.1.0"))).To(Succeed())
	g.Expect(v020.Write(filepath.Join(dir, "infrastructure-"+ProviderName, "v0.2.0"))).To(Succeed())
	cfg := clusterctlConfig(t, dir)

	clusterctllog.SetLogger(testr.NewWithOptions(t, testr.Options{Verbosity: 1}))
	t.Cleanup(func() { clusterctllog.SetLogger(logr.Discard()) })
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(writeAdminKubeconfig(kubeconfig, releasedVersionProxy(t, env.Config).URL)).To(Succeed())
	refused := &refusals{}
	proxy := impersonatingProxy(t, env.Config, "system:serviceaccount:"+installNamespace+":"+serviceAccount, refused)
	managerKubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(writeKubeconfig(managerKubeconfig, proxy.URL)).To(Succeed())
	cluster := startClusterStandIn(t, env, binary, managerKubeconfig, installNamespace)

	c, err := clusterctl.New(ctx, cfg)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = c.Init(ctx, clusterctl.InitOptions{
		Kubeconfig:              clusterctl.Kubeconfig{Path: kubeconfig},
		CoreProvider:            "cluster-api:v1.14.2",
		BootstrapProviders:      []string{"-"},
		ControlPlaneProviders:   []string{"-"},
		InfrastructureProviders: []string{ProviderName + ":v0.1.0"},
		WaitProviders:           true,
		WaitProviderTimeout:     3 * time.Minute,
	})
	g.Expect(err).NotTo(HaveOccurred(), "clusterctl init; the cluster stand-in says: %v", cluster.Errors())
	g.Expect(installedVersion(ctx, t, env.Client)).To(Equal("v0.1.0"))
	g.Expect(managerImage(ctx, t, env.Client)).To(Equal(imageRepo + "v0.1.0"))

	// What a user makes under v0.1.0, in both versions of the CAPM3 kinds, with a client that
	// keeps the API server's warnings as kubectl shows them.
	warned := &warnings{}
	userConfig := rest.CopyConfig(env.Config)
	userConfig.WarningHandlerWithContext = warned
	user, err := client.New(userConfig, client.Options{Scheme: env.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(user.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: userNS}})).To(Succeed())
	g.Eventually(func() error { return installYAML(ctx, user, userObjects) }).WithTimeout(time.Minute).Should(Succeed(),
		"v1beta1 objects are written through the v0.1.0 manager's conversion webhook")
	g.Expect(warned.list()).To(ContainElement(ContainSubstring(`unknown field "spec.osNetConfig"`)), "v0.1.0's CRD does not know the field")
	address := claimedAddress(ctx, t, env.Client, "worker-0")
	before := readUserObjects(ctx, t, env.Client)
	g.Expect(before[objKey{"v1beta2", "Metal3DataTemplate", "with-osnet"}]["spec"]).NotTo(HaveKey("osNetConfig"), "v0.1.0's CRD does not know the field")
	uids := componentUIDs(ctx, t, env.Client)

	err = c.ApplyUpgrade(ctx, clusterctl.ApplyUpgradeOptions{
		Kubeconfig:              clusterctl.Kubeconfig{Path: kubeconfig},
		InfrastructureProviders: []string{installNamespace + "/" + ProviderName + ":v0.2.0"},
		WaitProviders:           true,
		WaitProviderTimeout:     3 * time.Minute,
	})
	g.Expect(err).NotTo(HaveOccurred(), "clusterctl upgrade apply; the cluster stand-in says: %v", cluster.Errors())

	t.Run("clusterctl's inventory and the Deployment say v0.2.0", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(installedVersion(ctx, t, env.Client)).To(Equal("v0.2.0"))
		g.Expect(managerImage(ctx, t, env.Client)).To(Equal(imageRepo + "v0.2.0"))
		runs := cluster.Runs()
		g.Expect(runs).To(HaveLen(2), "one manager per release")
		g.Expect(runs[0].Image).To(Equal(imageRepo + "v0.1.0"))
		g.Expect(runs[1].Image).To(Equal(imageRepo + "v0.2.0"))
		g.Expect(runs[0].Stopped).NotTo(BeZero())
		g.Expect(runs[0].Stopped.Before(runs[1].Started)).To(BeTrue(), "clusterctl scales the old manager down before the new one starts: never two at once")
		g.Expect(runs[0].Killed).To(BeFalse(), "the v0.1.0 manager stopped within the Pod's grace period (took %s)", runs[0].StopTook)
		g.Expect(runs[0].Err).NotTo(HaveOccurred(), "the v0.1.0 manager's exit")
		t.Logf("the v0.1.0 manager stopped %s after SIGTERM", runs[0].StopTook.Round(time.Millisecond))
	})

	t.Run("what clusterctl replaced and what it kept", func(t *testing.T) {
		after := componentUIDs(ctx, t, env.Client)
		for _, k := range []string{"Deployment", "ServiceAccount", "Service", "Role", "RoleBinding", "Issuer", "Certificate",
			// Cluster-scoped, but not in clusterctl's list of cluster-scoped kinds: deleted too.
			"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"} {
			NewWithT(t).Expect(after[k]).NotTo(Equal(uids[k]), "%s is deleted and created again", k)
		}
		for _, k := range []string{"Namespace", "ClusterRole", "ClusterRoleBinding", "CRD " + dataTemplates, "Secret " + servingSec} {
			NewWithT(t).Expect(after[k]).To(Equal(uids[k]), "%s is updated in place", k)
		}
	})

	t.Run("the CRDs are v0.2.0's, served with the CA cert-manager injected", func(t *testing.T) {
		g := NewWithT(t)
		want, err := utilyaml.ToUnstructured(v020.Components)
		g.Expect(err).NotTo(HaveOccurred())
		n := 0
		for _, w := range want {
			if w.GetKind() != "CustomResourceDefinition" {
				continue
			}
			n++
			have := &unstructured.Unstructured{}
			have.SetGroupVersionKind(w.GroupVersionKind())
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: w.GetName()}, have)).To(Succeed())
			haveVersions, _, _ := unstructured.NestedSlice(have.Object, "spec", "versions")
			wantVersions, _, _ := unstructured.NestedSlice(w.Object, "spec", "versions")
			g.Expect(toJSON(haveVersions)).To(MatchJSON(toJSON(wantVersions)), "CRD %s", w.GetName())
			g.Expect(have.GetLabels()).To(HaveKeyWithValue("cluster.x-k8s.io/provider", "infrastructure-metalwire"))
			stored, _, _ := unstructured.NestedStringSlice(have.Object, "status", "storedVersions")
			g.Expect(stored).To(HaveLen(1), "CRD %s: installed by v0.1.0, every object stored in one version", w.GetName())
			if _, ok := w.GetAnnotations()["cert-manager.io/inject-ca-from"]; ok {
				ca, _, _ := unstructured.NestedString(have.Object, "spec", "conversion", "webhook", "clientConfig", "caBundle")
				g.Expect(ca).NotTo(BeEmpty(), "CRD %s", w.GetName())
			}
		}
		g.Expect(n).To(Equal(16))
	})

	t.Run("every object made under v0.1.0 is there, unchanged, in v1beta1 and v1beta2", func(t *testing.T) {
		g := NewWithT(t)
		after := readUserObjects(ctx, t, env.Client)
		g.Expect(after).To(HaveLen(len(before)))
		for k, v := range before {
			g.Expect(toJSON(after[k])).To(MatchJSON(toJSON(v)), "%s %s as %s", k.kind, k.name, k.version)
		}
		g.Expect(claimedAddress(ctx, t, env.Client, "worker-0")).To(Equal(address), "the address stays with its claim")
	})

	t.Run("the v0.2.0 manager carries on with them", func(t *testing.T) {
		g := NewWithT(t)
		// A claim made under v0.1.0 (its finalizer set by v0.1.0) is released by v0.2.0.
		claim := &unstructured.Unstructured{}
		claim.SetAPIVersion("ipam.metal3.io/v1alpha1")
		claim.SetKind("IPClaim")
		claim.SetNamespace(userNS)
		claim.SetName("worker-0")
		g.Expect(env.Client.Delete(ctx, claim)).To(Succeed())
		g.Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim.DeepCopy()))
		}).WithTimeout(time.Minute).WithPolling(200*time.Millisecond).Should(BeTrue(), "the claim's finalizer is removed once its address is released")
		// The pool made under v0.1.0 serves a new claim.
		g.Expect(installYAML(ctx, env.Client, "apiVersion: ipam.metal3.io/v1alpha1\nkind: IPClaim\nmetadata: {name: worker-1, namespace: lab}\nspec:\n  pool: {name: lab-v4}\n")).To(Succeed())
		g.Expect(claimedAddress(ctx, t, env.Client, "worker-1")).To(HavePrefix("192.168.111."))
		// The field v0.2.0's CRD added is kept now, in v1beta2 and through v1beta1.
		warned.reset()
		g.Expect(installYAML(ctx, user, strings.ReplaceAll(osnetTemplate, "with-osnet", "with-osnet-after"))).To(Succeed())
		g.Expect(warned.list()).To(BeEmpty())
		for _, version := range []string{"v1beta2", "v1beta1"} {
			o := readAs(ctx, t, env.Client, version, "Metal3DataTemplate", "with-osnet-after")
			g.Expect(toJSON(o.Object)).To(ContainSubstring("nic1"), "as %s", version)
		}
	})

	g.Expect(refused.list()).To(BeEmpty(), "requests the API server refused the managers' ServiceAccount")
	g.Expect(cluster.Errors()).To(BeEmpty(), "the cluster stand-in")
}

// upgradeRelease is this commit's release as version: the image tagged version, metadata.yaml
// listing series, and the CRDs' conversion webhook called at url (the test API server reaches
// no Service; cert-manager's CA is injected as in a cluster, by clusterStandIn). edit changes
// each object further.
func upgradeRelease(t *testing.T, version, url string, series []Series, edit func(*unstructured.Unstructured)) *Artifacts {
	t.Helper()
	a, err := Make(Options{Root: filepath.Join("..", ".."), Image: imageRepo + version})
	if err != nil {
		t.Fatal(err)
	}
	saved := ReleaseSeries
	ReleaseSeries = series
	a.Metadata = Metadata()
	ReleaseSeries = saved
	objs, err := utilyaml.ToUnstructured(a.Components)
	if err != nil {
		t.Fatal(err)
	}
	var docs [][]byte
	for i := range objs {
		o := &objs[i]
		if _, ok, _ := unstructured.NestedMap(o.Object, "spec", "conversion", "webhook", "clientConfig", "service"); ok {
			unstructured.RemoveNestedField(o.Object, "spec", "conversion", "webhook", "clientConfig", "service")
			if err := unstructured.SetNestedField(o.Object, url, "spec", "conversion", "webhook", "clientConfig", "url"); err != nil {
				t.Fatal(err)
			}
		}
		if edit != nil {
			edit(o)
		}
		out, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, out)
	}
	a.Components = bytes.Join(docs, []byte("---\n"))
	return a
}

// withoutOSNetConfig makes Metal3DataTemplate's CRD as a release before spec.osNetConfig was.
func withoutOSNetConfig(o *unstructured.Unstructured) {
	if o.GetKind() != "CustomResourceDefinition" || o.GetName() != dataTemplates {
		return
	}
	versions, _, _ := unstructured.NestedSlice(o.Object, "spec", "versions")
	for _, v := range versions {
		version := v.(map[string]any)
		spec, ok, _ := unstructured.NestedMap(version, "schema", "openAPIV3Schema", "properties", "spec")
		if !ok {
			continue
		}
		unstructured.RemoveNestedField(spec, "properties", "osNetConfig")
		rules, _, _ := unstructured.NestedSlice(spec, "x-kubernetes-validations")
		rules = slices.DeleteFunc(rules, func(r any) bool { return strings.Contains(fmt.Sprint(r), "osNetConfig") })
		spec["x-kubernetes-validations"] = rules
		_ = unstructured.SetNestedMap(version, spec, "schema", "openAPIV3Schema", "properties", "spec")
	}
	_ = unstructured.SetNestedSlice(o.Object, versions, "spec", "versions")
}

// clusterctlConfig writes a clusterctl.yaml naming the local repository in dir (metalwire's
// releases and a Cluster API core provider of one Namespace: clusterctl needs a core provider)
// and keeps clusterctl's state in the test's directories.
func clusterctlConfig(t *testing.T, dir string) string {
	t.Helper()
	core := filepath.Join(dir, "cluster-api", "v1.14.2")
	if err := os.MkdirAll(core, 0o750); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"core-components.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: capi-system\n",
		"metadata.yaml":        "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n  - major: 1\n    minor: 14\n    contract: v1beta2\n",
	} {
		if err := os.WriteFile(filepath.Join(core, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "clusterctl.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, `providers:
  - name: cluster-api
    type: CoreProvider
    url: file://%s/core-components.yaml
  - name: %s
    type: InfrastructureProvider
    url: file://%s/infrastructure-%s/v0.1.0/%s
`, core, ProviderName, dir, ProviderName, ComponentsFile), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
	t.Setenv("HOME", dir)
	return cfg
}

// deleteCRDs deletes the CRDs of groups and waits until they are gone.
func deleteCRDs(ctx context.Context, t *testing.T, c client.Client, groups []string) {
	t.Helper()
	g := NewWithT(t)
	list := func() []unstructured.Unstructured {
		crds := &unstructured.UnstructuredList{}
		crds.SetAPIVersion("apiextensions.k8s.io/v1")
		crds.SetKind("CustomResourceDefinitionList")
		g.Expect(c.List(ctx, crds)).To(Succeed())
		return slices.DeleteFunc(crds.Items, func(crd unstructured.Unstructured) bool {
			group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
			return !slices.Contains(groups, group)
		})
	}
	for _, crd := range list() {
		// A CRD deleted before its storage has initialized can stay Terminating: the API server's
		// finalizer cannot list its instances ("storage is (re)initializing"). The test API server
		// has just created these, so each is deleted only once its objects can be listed.
		g.Eventually(func() error { return listInstances(ctx, c, crd) }).WithTimeout(time.Minute).Should(Succeed(), crd.GetName())
		g.Expect(client.IgnoreNotFound(c.Delete(ctx, &crd))).To(Succeed())
	}
	g.Eventually(func() []string {
		var left []string
		for _, crd := range list() {
			conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			left = append(left, crd.GetName()+" "+toJSON(conditions))
		}
		return left
	}).WithTimeout(2 * time.Minute).Should(BeEmpty())
}

// listInstances lists at most one object of the CRD's storage version: it succeeds once the API
// server serves the CRD's objects.
func listInstances(ctx context.Context, c client.Client, crd unstructured.Unstructured) error {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		version, _ := v.(map[string]any)
		if storage, _ := version["storage"].(bool); !storage {
			continue
		}
		name, _ := version["name"].(string)
		objects := &unstructured.UnstructuredList{}
		objects.SetAPIVersion(group + "/" + name)
		objects.SetKind(kind + "List")
		return c.List(ctx, objects, client.Limit(1))
	}
	return fmt.Errorf("CRD %s has no storage version", crd.GetName())
}

// installedVersion is metalwire's version in clusterctl's inventory (its one Provider object).
func installedVersion(ctx context.Context, t *testing.T, c client.Client) string {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("clusterctl.cluster.x-k8s.io/v1alpha3")
	list.SetKind("ProviderList")
	NewWithT(t).Expect(c.List(ctx, list, client.MatchingLabels{"cluster.x-k8s.io/provider": "infrastructure-" + ProviderName})).To(Succeed())
	NewWithT(t).Expect(list.Items).To(HaveLen(1), "clusterctl's inventory holds one metalwire")
	version, _, _ := unstructured.NestedString(list.Items[0].Object, "version")
	return version
}

func managerImage(ctx context.Context, t *testing.T, c client.Client) string {
	t.Helper()
	d := &appsv1.Deployment{}
	NewWithT(t).Expect(c.Get(ctx, client.ObjectKey{Namespace: installNamespace, Name: deployment}, d)).To(Succeed())
	NewWithT(t).Expect(d.Spec.Template.Spec.Containers).To(HaveLen(1))
	return d.Spec.Template.Spec.Containers[0].Image
}

// componentUIDs names the UID of each installed component the test follows (kind, or "kind name").
func componentUIDs(ctx context.Context, t *testing.T, c client.Client) map[string]types.UID {
	t.Helper()
	g := NewWithT(t)
	uids := map[string]types.UID{}
	get := func(key string, obj client.Object, ns, name string) {
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)).To(Succeed(), key)
		uids[key] = obj.GetUID()
	}
	get("Deployment", &appsv1.Deployment{}, installNamespace, deployment)
	get("ServiceAccount", &corev1.ServiceAccount{}, installNamespace, serviceAccount)
	get("Service", &corev1.Service{}, installNamespace, "metalwire-webhook-service")
	get("Role", &rbacv1.Role{}, installNamespace, "metalwire-leader-election")
	get("RoleBinding", &rbacv1.RoleBinding{}, installNamespace, "metalwire-leader-election")
	get("Namespace", &corev1.Namespace{}, "", installNamespace)
	get("ClusterRole", &rbacv1.ClusterRole{}, "", "metalwire-manager-role")
	get("ClusterRoleBinding", &rbacv1.ClusterRoleBinding{}, "", "metalwire-manager")
	get("Secret "+servingSec, &corev1.Secret{}, installNamespace, servingSec)
	get("ValidatingAdmissionPolicy", &admissionv1.ValidatingAdmissionPolicy{}, "", "metalwire-same-namespace-references")
	get("ValidatingAdmissionPolicyBinding", &admissionv1.ValidatingAdmissionPolicyBinding{}, "", "metalwire-same-namespace-references")
	for _, kind := range []string{"Issuer", "Certificate"} {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("cert-manager.io/v1")
		u.SetKind(kind + "List")
		list := &unstructured.UnstructuredList{Object: u.Object}
		g.Expect(c.List(ctx, list, client.InNamespace(installNamespace))).To(Succeed())
		g.Expect(list.Items).To(HaveLen(1), kind)
		uids[kind] = list.Items[0].GetUID()
	}
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	get("CRD "+dataTemplates, crd, "", dataTemplates)
	return uids
}

// userObjects are what a user made under v0.1.0: a pool and a claim on it, data templates and
// machines in CAPM3's v1beta1 and in v1beta2.
const userObjects = `apiVersion: ipam.metal3.io/v1alpha1
kind: IPPool
metadata: {name: lab-v4, namespace: lab, labels: {team: metal}}
spec:
  clusterName: lab
  namePrefix: lab-v4
  pools: [{start: 192.168.111.20, end: 192.168.111.59}]
  prefix: 24
  gateway: 192.168.111.1
---
apiVersion: ipam.metal3.io/v1alpha1
kind: IPClaim
metadata: {name: worker-0, namespace: lab}
spec:
  pool: {name: lab-v4}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3DataTemplate
metadata: {name: nodes-v1beta1, namespace: lab}
spec:
  clusterName: lab
  metaData:
    objectNames: [{key: name, object: machine}]
    strings: [{key: role, value: worker}]
  networkData:
    services:
      dns: [192.168.111.1]
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3DataTemplate
metadata: {name: nodes, namespace: lab, annotations: {owner: lab-team}}
spec:
  clusterName: lab
  metaData:
    objectNames: [{key: name, object: machine}]
    strings: [{key: role, value: control-plane}]
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3Machine
metadata: {name: worker-a, namespace: lab}
spec:
  image:
    url: http://images.lab/ubuntu.img
    checksum: http://images.lab/ubuntu.img.sha256sum
    checksumType: sha256
    format: raw
  dataTemplate: {name: nodes-v1beta1}
  automatedCleaningMode: metadata
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Machine
metadata: {name: worker-b, namespace: lab}
spec:
  image:
    url: http://images.lab/ubuntu.img
    checksum: http://images.lab/ubuntu.img.sha256sum
    checksumType: sha256
    diskFormat: raw
  dataTemplate: {name: nodes}
---
` + osnetTemplate

// osnetTemplate uses the field v0.1.0's CRD lacks.
const osnetTemplate = `apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3DataTemplate
metadata: {name: with-osnet, namespace: lab}
spec:
  clusterName: lab
  networkData:
    services:
      dns: [192.168.111.1]
  osNetConfig:
    template: |
      - type: interface
        name: nic1
`

// objKey is a user object read as one version.
type objKey struct{ version, kind, name string }

// readUserObjects reads every user object as each version it is served in: its labels,
// annotations and spec (status and finalizers are the controllers').
func readUserObjects(ctx context.Context, t *testing.T, c client.Client) map[objKey]map[string]any {
	t.Helper()
	out := map[objKey]map[string]any{}
	for _, o := range []struct {
		kind     string
		names    []string
		versions []string
	}{
		{"IPPool", []string{"lab-v4"}, []string{"v1alpha1"}},
		{"IPClaim", []string{"worker-0"}, []string{"v1alpha1"}},
		{"Metal3DataTemplate", []string{"nodes-v1beta1", "nodes", "with-osnet"}, []string{"v1beta1", "v1beta2"}},
		{"Metal3Machine", []string{"worker-a", "worker-b"}, []string{"v1beta1", "v1beta2"}},
	} {
		for _, name := range o.names {
			for _, version := range o.versions {
				u := readAs(ctx, t, c, version, o.kind, name)
				spec, _, _ := unstructured.NestedMap(u.Object, "spec")
				out[objKey{version, o.kind, name}] = map[string]any{"labels": u.GetLabels(), "annotations": u.GetAnnotations(), "spec": spec}
			}
		}
	}
	return out
}

func readAs(ctx context.Context, t *testing.T, c client.Client, version, kind, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := getAs(ctx, c, version, kind, name)
	NewWithT(t).Expect(err).NotTo(HaveOccurred(), "%s %s as %s", kind, name, version)
	return u
}

// getAs reads a user object as version (v1alpha1: ipam.metal3.io).
func getAs(ctx context.Context, c client.Client, version, kind, name string) (*unstructured.Unstructured, error) {
	group := "infrastructure.cluster.x-k8s.io"
	if version == "v1alpha1" {
		group = "ipam.metal3.io"
	}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(group + "/" + version)
	u.SetKind(kind)
	return u, c.Get(ctx, client.ObjectKey{Namespace: userNS, Name: name}, u)
}

// claimedAddress waits for the claim's address and returns it.
func claimedAddress(ctx context.Context, t *testing.T, c client.Client, claim string) string {
	t.Helper()
	var address string
	NewWithT(t).Eventually(func(g Gomega) {
		u, err := getAs(ctx, c, "v1alpha1", "IPClaim", claim)
		g.Expect(err).NotTo(HaveOccurred())
		name, _, _ := unstructured.NestedString(u.Object, "status", "address", "name")
		g.Expect(name).NotTo(BeEmpty(), "claim %s has no address yet", claim)
		a, err := getAs(ctx, c, "v1alpha1", "IPAddress", name)
		g.Expect(err).NotTo(HaveOccurred())
		address, _, _ = unstructured.NestedString(a.Object, "spec", "address")
	}).WithTimeout(time.Minute).WithPolling(200 * time.Millisecond).Should(Succeed())
	return address
}

// warnings keeps the API server's warnings (rest.WarningHandlerWithContext).
type warnings struct {
	mu   sync.Mutex
	seen []string
}

func (w *warnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

func (w *warnings) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.seen)
}

func (w *warnings) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = nil
}

func toJSON(v any) string {
	out, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(out)
}
