package release

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/metalwire/metalwire/internal/controller"
	"github.com/metalwire/metalwire/internal/devenv"
	"github.com/metalwire/metalwire/internal/devenv/standin"
	"github.com/metalwire/metalwire/internal/manager"
	"github.com/metalwire/metalwire/internal/simulator"
	"github.com/metalwire/metalwire/internal/switchdriver"
	"github.com/metalwire/metalwire/test/e2e/framework"
)

// The identity the Deployment runs as: clusterctl installs the components in this namespace.
const (
	installNamespace = "metalwire-system"
	serviceAccount   = "metalwire-manager"
)

// TestInstall installs the release as clusterctl would (variables substituted, cert-manager's CA
// injected into the conversion webhook) into an API server that enforces owner-reference
// permissions, runs the manager with the Deployment's arguments and the ServiceAccount's
// identity, and runs the examples to the end. Any request the API server refuses the manager
// fails the test: that is how a permission missing from config/rbac shows.
func TestInstall(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	g.Expect(framework.BuildClusterAPI(t.TempDir())).To(Succeed())
	env, err := devenv.Start(ctx, devenv.Options{
		Dir:              t.TempDir(),
		Hosts:            4,
		Namespace:        "default",
		Delays:           framework.Delays,
		AdmissionPlugins: []string{"OwnerReferencesPermissionEnforcement"},
		Controllers:      []controller.Group{},
	})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})

	args := install(t, env)

	// The manager reaches the API server through a proxy that speaks as the ServiceAccount and
	// remembers every refusal.
	refused := &refusals{}
	proxy := impersonatingProxy(t, env.Control.Config, "system:serviceaccount:"+installNamespace+":"+serviceAccount, refused)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(writeKubeconfig(kubeconfig, proxy.URL)).To(Succeed())

	o := &manager.Options{}
	fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
	o.AddFlags(fs)
	// The Deployment's own arguments, then what differs outside a pod: the kubeconfig, the
	// namespace a pod would know from its ServiceAccount, and no fixed ports.
	args = append(args, "--kubeconfig="+kubeconfig, "--leader-election-namespace="+installNamespace,
		"--health-probe-bind-address=0", "--metrics-bind-address=0")
	g.Expect(fs.Parse(args)).To(Succeed(), "the Deployment's arguments: %v", args)
	groups, err := o.Groups()
	g.Expect(err).NotTo(HaveOccurred())
	// examples/cluster joins dev mode's simulated switch (networkOS simulated, a STAND-IN); the
	// installed manager reaches it as dev mode's does, through the stand-in driver, for this test
	// only. Everything else is the shipped manager.
	o.SwitchDrivers = switchdriver.Default.Clone()
	o.SwitchDrivers.Register(standin.New(string(simulator.SwitchNetworkOS)))
	mgrCtx, stopManager := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- manager.Run(mgrCtx, o, groups) }()
	t.Cleanup(func() {
		stopManager()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the manager: %v", err)
			}
		case <-time.After(time.Minute):
			t.Error("the manager did not stop within a minute")
		}
	})

	n, err := devenv.Apply(ctx, env.Client, filepath.Join("..", "..", "examples"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(n).To(BeNumerically(">", 0))
	framework.WaitUntilDone(t, env, "default")

	// Leader election held its Lease with the Role the components grant.
	lease := &coordinationv1.Lease{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: installNamespace, Name: o.LeaderElectionID}, lease)).To(Succeed())
	g.Expect(lease.Spec.HolderIdentity).NotTo(BeNil())
	g.Expect(refused.list()).To(BeEmpty(), "requests the API server refused the manager's ServiceAccount: add the permission to the +kubebuilder:rbac markers")

	clusterctlMovesEverything(t, env, "default")
}

// install applies the release components as clusterctl init would after cert-manager issued
// the certificate: cert-manager's own kinds are left out (no cert-manager here) and the CRDs'
// conversion webhook points at the local webhook server with its CA, as cert-manager's CA
// injector and the Service would make it. It returns the manager container's arguments.
func install(t *testing.T, env *devenv.Env) []string {
	t.Helper()
	g := NewWithT(t)
	a := makeArtifacts(t)
	vars := map[string]string{}
	processed, err := yamlprocessor.NewSimpleProcessor().Process(a.Components, func(k string) (string, error) {
		if v, ok := vars[k]; ok {
			return v, nil
		}
		return "", fmt.Errorf("variable %s is not set", k)
	})
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := utilyaml.ToUnstructured(processed)
	g.Expect(err).NotTo(HaveOccurred())
	hooks := env.Control.Webhooks
	convertURL := "https://" + net.JoinHostPort(hooks.LocalServingHost, strconv.Itoa(hooks.LocalServingPort)) + "/convert"
	var args []string
	ctx := context.Background()
	// clusterctl creates Namespaces and CRDs before the objects that live in or use them.
	first := func(kind string) int {
		switch kind {
		case "Namespace":
			return 0
		case "CustomResourceDefinition":
			return 1
		}
		return 2
	}
	sort.SliceStable(objs, func(i, j int) bool { return first(objs[i].GetKind()) < first(objs[j].GetKind()) })
	for i := range objs {
		o := &objs[i]
		switch o.GetKind() {
		case "Issuer", "Certificate":
			continue
		case "CustomResourceDefinition":
			if _, ok, _ := unstructured.NestedMap(o.Object, "spec", "conversion", "webhook"); ok {
				g.Expect(unstructured.SetNestedMap(o.Object, map[string]any{
					"url":      convertURL,
					"caBundle": base64.StdEncoding.EncodeToString(hooks.LocalServingCAData),
				}, "spec", "conversion", "webhook", "clientConfig")).To(Succeed())
			}
		case "Deployment":
			containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			g.Expect(containers).To(HaveLen(1))
			for _, a := range containers[0].(map[string]any)["args"].([]any) {
				args = append(args, a.(string))
			}
		}
		g.Expect(apply(ctx, env.Client, o)).To(Succeed(), "%s %s", o.GetKind(), o.GetName())
	}
	g.Expect(args).NotTo(BeEmpty(), "the components have no manager Deployment")
	return args
}

// apply creates obj, or replaces what is there (the CRDs the test API server started with).
func apply(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error {
	err := c.Create(ctx, obj.DeepCopy())
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	current := &unstructured.Unstructured{}
	current.SetGroupVersionKind(obj.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), current); err != nil {
		return err
	}
	obj.SetResourceVersion(current.GetResourceVersion())
	return c.Update(ctx, obj)
}

// refusals are the requests answered 403 Forbidden.
type refusals struct {
	mu   sync.Mutex
	seen []string
}

func (r *refusals) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, s)
}

func (r *refusals) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// impersonatingProxy forwards every request to the API server as user (with a ServiceAccount's
// groups), using the administrator's credentials to impersonate, and records each 403.
func impersonatingProxy(t *testing.T, admin *rest.Config, user string, refused *refusals) *httptest.Server {
	t.Helper()
	transport, err := rest.TransportFor(admin)
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(admin.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Header.Del("Authorization")
			r.Out.Header.Set("Impersonate-User", user)
			for _, g := range []string{"system:serviceaccounts", "system:serviceaccounts:" + installNamespace, "system:authenticated"} {
				r.Out.Header.Add("Impersonate-Group", g)
			}
		},
		Transport:     transport,
		FlushInterval: -1, // watches stream
		ModifyResponse: func(resp *http.Response) error {
			if resp.StatusCode == http.StatusForbidden {
				refused.add(resp.Request.Method + " " + resp.Request.URL.Path)
			}
			return nil
		},
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	return srv
}

// writeKubeconfig writes a kubeconfig that reaches server without credentials (the proxy has them).
func writeKubeconfig(path, server string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["proxy"] = &clientcmdapi.Cluster{Server: server}
	cfg.AuthInfos["manager"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["manager"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "manager"}
	cfg.CurrentContext = "manager"
	return clientcmd.WriteToFile(*cfg, path)
}

// The kubelet kills the manager terminationGracePeriodSeconds after SIGTERM. The manager gives
// its controllers --graceful-shutdown-timeout to finish, then releases its Lease and exits: the
// Pod's grace must be longer, or a slow stop is killed before the Lease is released (and the
// next replica waits for it to expire).
func TestPodGracePeriodExceedsManagerShutdown(t *testing.T) {
	g := NewWithT(t)
	// The components as clusterctl writes them with no variable set (every default taken).
	processed, err := yamlprocessor.NewSimpleProcessor().Process(makeArtifacts(t).Components, func(k string) (string, error) {
		return "", fmt.Errorf("variable %s is not set", k)
	})
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := utilyaml.ToUnstructured(processed)
	g.Expect(err).NotTo(HaveOccurred())
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		grace := 30.0 // Kubernetes' default
		if v, found, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "template", "spec", "terminationGracePeriodSeconds"); found {
			f, ok := v.(float64) // as YAML decodes numbers
			g.Expect(ok).To(BeTrue(), "terminationGracePeriodSeconds %v", v)
			grace = f
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		g.Expect(containers).To(HaveLen(1))
		var args []string
		for _, a := range containers[0].(map[string]any)["args"].([]any) {
			args = append(args, a.(string))
		}
		opts := &manager.Options{}
		fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
		opts.AddFlags(fs)
		g.Expect(fs.Parse(args)).To(Succeed())
		g.Expect(time.Duration(grace*float64(time.Second))).To(BeNumerically(">=", opts.GracefulShutdown+5*time.Second),
			"terminationGracePeriodSeconds %v against --graceful-shutdown-timeout %s: leave the manager time to release its Lease", grace, opts.GracefulShutdown)
		return
	}
	t.Fatal("the components have no Deployment")
}
