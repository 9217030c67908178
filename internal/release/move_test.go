package release

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	clusterctl "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	clusterctllog "sigs.k8s.io/cluster-api/cmd/clusterctl/log"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/devenv"
)

// metalwireGroups are the API groups whose CRDs the release installs.
var metalwireGroups = []string{"infrastructure.cluster.x-k8s.io", "ipam.metal3.io", "network.metalwire.io"}

// moveHierarchyKinds are the kinds no owner reference leads to from a Cluster: their CRDs say
// clusterctl.cluster.x-k8s.io/move-hierarchy, so clusterctl move takes them and what they own.
var moveHierarchyKinds = []string{
	"metal3datatemplates.infrastructure.cluster.x-k8s.io",
	"metal3preprovisioningdatatemplates.infrastructure.cluster.x-k8s.io",
	"ippools.ipam.metal3.io",
	"clusternetworks.network.metalwire.io",
	"networkdevices.network.metalwire.io",
	"nics.network.metalwire.io",
}

// Every CRD the generator writes is in the release, labelled for clusterctl move's discovery,
// and the kinds without an owner chain from a Cluster carry move-hierarchy.
func TestCRDsLabelledForClusterctlMove(t *testing.T) {
	g := NewWithT(t)
	objs, err := utilyaml.ToUnstructured(makeArtifacts(t).Components)
	g.Expect(err).NotTo(HaveOccurred())
	released := map[string]map[string]string{}
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" {
			released[o.GetName()] = o.GetLabels()
		}
	}
	bases, err := filepath.Glob(filepath.Join("..", "..", "config", "crd", "bases", "*.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(bases).NotTo(BeEmpty())
	for _, f := range bases {
		group, plural, _ := strings.Cut(strings.TrimSuffix(filepath.Base(f), ".yaml"), "_")
		name := plural + "." + group
		labels, ok := released[name]
		g.Expect(ok).To(BeTrue(), "CRD %s (config/crd/bases) is not in the release: add it to config/crd/kustomization.yaml", name)
		g.Expect(labels).To(HaveKeyWithValue(clusterctlv1.ClusterctlLabel, ""), "CRD %s: clusterctl move discovers only labelled kinds", name)
		if slices.Contains(moveHierarchyKinds, name) {
			g.Expect(labels).To(HaveKey(clusterctlv1.ClusterctlMoveHierarchyLabel), "CRD %s", name)
		} else {
			g.Expect(labels).NotTo(HaveKey(clusterctlv1.ClusterctlMoveHierarchyLabel), "CRD %s is reached from its Cluster", name)
		}
	}
	g.Expect(released).To(HaveLen(len(bases)))
}

// clusterctlMovesEverything runs `clusterctl move --dry-run` through clusterctl's library on the
// namespace, after labelling Cluster API's CRDs as clusterctl init does (the test API server
// installed them from Cluster API's module), and checks that the move takes every object of
// metalwire's kinds there and every Secret metalwire rendered.
func clusterctlMovesEverything(t *testing.T, env *devenv.Env, namespace string) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()

	s := runtime.NewScheme()
	g.Expect(apiextensionsv1.AddToScheme(s)).To(Succeed())
	crdClient, err := client.New(env.Control.Config, client.Options{Scheme: s})
	g.Expect(err).NotTo(HaveOccurred())
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	g.Expect(crdClient.List(ctx, crds)).To(Succeed())
	var ours []apiextensionsv1.CustomResourceDefinition // and BMO's BareMetalHost
	for i := range crds.Items {
		crd := &crds.Items[i]
		if slices.Contains(metalwireGroups, crd.Spec.Group) {
			ours = append(ours, *crd)
			continue
		}
		var add []string
		switch {
		case strings.HasSuffix(crd.Spec.Group, "cluster.x-k8s.io"):
			add = []string{clusterctlv1.ClusterctlLabel}
		case crd.Name == "baremetalhosts.metal3.io":
			// BMO is installed without clusterctl: its hosts move as docs/install.md says.
			add = []string{clusterctlv1.ClusterctlLabel, clusterctlv1.ClusterctlMoveHierarchyLabel}
			ours = append(ours, *crd)
		}
		if len(add) > 0 {
			orig := crd.DeepCopy()
			if crd.Labels == nil {
				crd.Labels = map[string]string{}
			}
			for _, l := range add {
				crd.Labels[l] = ""
			}
			g.Expect(crdClient.Patch(ctx, crd, client.MergeFrom(orig))).To(Succeed())
		}
	}

	moved := &moveRecorder{}
	clusterctllog.SetLogger(logr.New(moved))
	t.Cleanup(func() { clusterctllog.SetLogger(logr.Discard()) })
	cfg := filepath.Join(t.TempDir(), "clusterctl.yaml")
	g.Expect(os.WriteFile(cfg, []byte("{}\n"), 0o600)).To(Succeed())
	c, err := clusterctl.New(ctx, cfg)
	g.Expect(err).NotTo(HaveOccurred())
	// The test API server is built from source without a version, which clusterctl refuses;
	// a proxy in front of it says it is a release.
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(writeAdminKubeconfig(kubeconfig, releasedVersionProxy(t, env.Control.Config).URL)).To(Succeed())
	g.Expect(c.Move(ctx, clusterctl.MoveOptions{
		FromKubeconfig: clusterctl.Kubeconfig{Path: kubeconfig},
		Namespace:      namespace,
		DryRun:         true,
	})).To(Succeed())

	var want []string
	for _, crd := range ours {
		var storage string
		for _, v := range crd.Spec.Versions {
			if v.Storage {
				storage = v.Name
			}
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Group: crd.Spec.Group, Version: storage, Kind: crd.Spec.Names.ListKind})
		g.Expect(env.Client.List(ctx, list, client.InNamespace(namespace))).To(Succeed())
		for _, o := range list.Items {
			want = append(want, o.GetKind()+" "+o.GetName())
		}
	}
	secrets := &corev1.SecretList{}
	g.Expect(env.Client.List(ctx, secrets, client.InNamespace(namespace), client.MatchingLabels{infrav1.BMOEnvironmentLabel: infrav1.BMOEnvironmentLabelValue})).To(Succeed())
	// BMC credentials are the user's and BMO's (in a cluster BMO makes the host own them; the
	// simulator here does not), not metalwire's.
	hosts := &unstructured.UnstructuredList{}
	hosts.SetGroupVersionKind(bmov1.GroupVersion.WithKind("BareMetalHostList"))
	g.Expect(env.Client.List(ctx, hosts, client.InNamespace(namespace))).To(Succeed())
	credentials := map[string]bool{}
	for _, h := range hosts.Items {
		name, _, _ := unstructured.NestedString(h.Object, "spec", "bmc", "credentialsName")
		credentials[name] = true
	}
	for _, s := range secrets.Items {
		if !credentials[s.Name] {
			want = append(want, "Secret "+s.Name)
		}
	}
	// The examples' flow makes at least one object of every kind a cluster is made of.
	for _, kind := range []string{"Metal3Cluster", "Metal3Machine", "Metal3MachineTemplate", "Metal3DataTemplate", "Metal3DataClaim", "Metal3Data",
		"Metal3PreprovisioningDataTemplate", "IPPool", "IPClaim", "IPAddress", "ClusterNetwork", "NetworkDevice", "BareMetalHost", "Secret"} {
		g.Expect(slices.ContainsFunc(want, func(s string) bool { return strings.HasPrefix(s, kind+" ") })).To(BeTrue(), "the examples made no %s in %s", kind, namespace)
	}
	g.Expect(moved.list()).To(ContainElements(want), "clusterctl move would leave these behind: give them an owner reference chain to their Cluster, or their CRD a clusterctl move label")
}

// moveRecorder is a logr sink that keeps what clusterctl's mover says it creates on the target
// ("Creating", <Kind>, <name>, "Namespace", <namespace>): in a dry run, the objects it would move.
type moveRecorder struct {
	mu      sync.Mutex
	objects []string
}

func (r *moveRecorder) Init(logr.RuntimeInfo)          {}
func (r *moveRecorder) Enabled(int) bool               { return true }
func (r *moveRecorder) Error(error, string, ...any)    {}
func (r *moveRecorder) WithValues(...any) logr.LogSink { return r }
func (r *moveRecorder) WithName(string) logr.LogSink   { return r }
func (r *moveRecorder) Info(_ int, msg string, kv ...any) {
	if msg != "Creating" || len(kv) < 2 {
		return
	}
	kind, _ := kv[0].(string)
	name, _ := kv[1].(string)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.objects = append(r.objects, kind+" "+name)
}

func (r *moveRecorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.objects)
}

// releasedVersionProxy forwards every request to the API server with the administrator's
// credentials and answers /version as a released Kubernetes would.
func releasedVersionProxy(t *testing.T, admin *rest.Config) *httptest.Server {
	t.Helper()
	transport, err := rest.TransportFor(admin)
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(admin.Host)
	if err != nil {
		t.Fatal(err)
	}
	forward := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport:     transport,
		FlushInterval: -1,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/version" {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(version.Info{Major: "1", Minor: "34", GitVersion: "v1.34.0"})
			return
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// writeAdminKubeconfig writes a kubeconfig that reaches server without credentials (the proxy
// has them).
func writeAdminKubeconfig(path, server string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: server}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["admin"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "admin", Namespace: "default"}
	cfg.CurrentContext = "admin"
	return clientcmd.WriteToFile(*cfg, path)
}
