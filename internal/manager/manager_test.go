package manager_test

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/manager"
)

const (
	timeout = 2 * time.Minute // the machine running the tests is shared and slow
	poll    = 200 * time.Millisecond
)

// TestManagerAsUsersRunIt runs the manager as `metalwire manager --kubeconfig FILE` runs it:
// outside a cluster, leader election on, metrics over HTTPS. One manager, several checks, as
// starting one costs the most.
func TestManagerAsUsersRunIt(t *testing.T) {
	g := NewWithT(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(os.WriteFile(kubeconfig, env.KubeConfig, 0o600)).To(Succeed())

	o := &manager.Options{}
	fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
	o.AddFlags(fs)
	probe, metrics := freeAddr(t), freeAddr(t)
	g.Expect(fs.Parse([]string{"--kubeconfig", kubeconfig, "--health-probe-bind-address", probe,
		"--metrics-bind-address", metrics, "--graceful-shutdown-timeout=10s"})).To(Succeed())
	groups, err := o.Groups()
	g.Expect(err).NotTo(HaveOccurred())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- manager.Run(ctx, o, groups) }()

	t.Run("ready once the caches are synced", func(t *testing.T) {
		NewWithT(t).Eventually(func() (int, error) {
			resp, err := http.Get("http://" + probe + "/readyz")
			if err != nil {
				return 0, err
			}
			defer resp.Body.Close()
			return resp.StatusCode, nil
		}, timeout, poll).Should(Equal(http.StatusOK))
	})

	t.Run("outside a cluster the lease goes to the kubeconfig's namespace", func(t *testing.T) {
		lease := &coordinationv1.Lease{}
		NewWithT(t).Eventually(func() error {
			return env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "metalwire-manager.metalwire.io"}, lease)
		}, timeout, poll).Should(Succeed(), "the manager elects itself leader instead of exiting with 'unable to find leader election namespace'")
	})

	ns := env.NewNamespace(t)
	t.Run("nothing of a paused cluster changes until it is unpaused", func(t *testing.T) {
		pausedClusterConverges(t, ns)
	})

	t.Run("metrics need a token allowed to read them", func(t *testing.T) {
		metricsNeedAuthorisation(t, ns, metrics)
	})

	t.Run("stops within its grace period", func(t *testing.T) {
		g := NewWithT(t)
		cancel()
		var err error
		g.Eventually(done, 20*time.Second).Should(Receive(&err), "10 s grace period, and a margin for a loaded machine")
		g.Expect(err).NotTo(HaveOccurred(), "every runnable stopped in time")
	})
}

func pausedClusterConverges(t *testing.T, ns string) {
	g := NewWithT(t)
	ctx := context.Background()
	const clusterName = "moving"
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: clusterName},
		Spec:       clusterv1.ClusterSpec{Paused: ptr.To(true)},
	}
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
	ofCluster := map[string]string{clusterv1.ClusterNameLabel: clusterName}

	start, end := ipamv1.IPAddressStr("192.168.10.10"), ipamv1.IPAddressStr("192.168.10.20")
	pool := &ipamv1.IPPool{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "provisioning", Labels: ofCluster},
		Spec:       ipamv1.IPPoolSpec{NamePrefix: "provisioning", Pools: []ipamv1.Pool{{Start: &start, End: &end}}, Prefix: 24},
	}
	tmpl := &infrav1.Metal3DataTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "workers"},
		Spec:       infrav1.Metal3DataTemplateSpec{ClusterName: clusterName},
	}
	claim := &infrav1.Metal3DataClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "worker-0", Labels: ofCluster},
		Spec:       infrav1.Metal3DataClaimSpec{Template: corev1.ObjectReference{Name: tmpl.Name}},
	}
	// A Metal3Data of the cluster whose template is not there (yet): unpaused, it gets its
	// finalizer and says what it waits for.
	data := &infrav1.Metal3Data{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "elsewhere-0", Labels: ofCluster},
		Spec: infrav1.Metal3DataSpec{
			Claim:    corev1.ObjectReference{Name: "elsewhere-0"},
			Template: corev1.ObjectReference{Name: "elsewhere"},
		},
	}
	for _, o := range []client.Object{pool, tmpl, claim, data} {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed())
	}

	untouched := func(g Gomega) {
		for _, o := range []client.Object{pool, tmpl, claim, data} {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(o), o)).To(Succeed())
			g.Expect(o.GetFinalizers()).To(BeEmpty(), "%T %s got a finalizer while its cluster is paused", o, o.GetName())
		}
		g.Expect(pool.Status.Total).To(BeNil(), "the pool's status was written while paused")
		g.Expect(tmpl.Status.Indexes).To(BeEmpty(), "the template handed out an index while paused")
		g.Expect(claim.Status.RenderedData).To(BeNil())
		g.Expect(data.Status.Conditions).To(BeEmpty())
		list := &infrav1.Metal3DataList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		g.Expect(list.Items).To(HaveLen(1), "no Metal3Data made for the claim while paused")
	}
	g.Consistently(untouched, 5*time.Second, 500*time.Millisecond).Should(Succeed())

	before := cluster.DeepCopy()
	cluster.Spec.Paused = ptr.To(false)
	g.Expect(env.Client.Patch(ctx, cluster, client.MergeFrom(before))).To(Succeed())

	g.Eventually(func(g Gomega) {
		for _, o := range []client.Object{pool, tmpl, data} {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(o), o)).To(Succeed())
			g.Expect(o.GetFinalizers()).NotTo(BeEmpty(), "%T %s", o, o.GetName())
		}
		// A Metal3DataClaim takes no finalizer (its Metal3Data goes with it): it is served.
		g.Expect(pool.Status.Total).To(Equal(ptr.To[int64](11)))
		g.Expect(tmpl.Status.Indexes).To(ContainElement(HaveField("Name", claim.Name)))
		g.Expect(data.Status.Conditions).NotTo(BeEmpty())
	}, timeout, poll).Should(Succeed(), "once unpaused every object converges")
}

func metricsNeedAuthorisation(t *testing.T, ns, addr string) {
	g := NewWithT(t)
	ctx := context.Background()
	https := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		// controller-runtime serves a self-signed certificate when given none.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
	get := func(token string) (int, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/metrics", nil)
		g.Expect(err).NotTo(HaveOccurred())
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := https.Do(req)
		g.Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}

	code, _ := get("")
	g.Expect(code).To(Equal(http.StatusUnauthorized), "no token, no metrics")

	stranger := serviceAccountToken(t, ns, "stranger")
	code, _ = get(stranger)
	g.Expect(code).To(Equal(http.StatusForbidden), "a valid token without RBAC for /metrics is refused")

	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader-" + ns},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}
	g.Expect(env.Client.Create(ctx, role)).To(Succeed())
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader-" + ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "prometheus"}},
	}
	g.Expect(env.Client.Create(ctx, binding)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, binding); _ = env.Client.Delete(ctx, role) })
	prometheus := serviceAccountToken(t, ns, "prometheus")

	g.Eventually(func(g Gomega) {
		code, body := get(prometheus)
		g.Expect(code).To(Equal(http.StatusOK))
		g.Expect(body).To(ContainSubstring("controller_runtime_reconcile_total"))
		g.Expect(body).To(ContainSubstring("metalwire_hosts_associated_total"))
		g.Expect(body).To(ContainSubstring(`metalwire_ippool_addresses_free{namespace="` + ns + `",pool="provisioning"} 11`))
		g.Expect(body).To(ContainSubstring(`metalwire_ippool_addresses_allocated{namespace="` + ns + `",pool="provisioning"} 0`))
	}, timeout, poll).Should(Succeed())
}

// serviceAccountToken creates a ServiceAccount and returns a token of it.
func serviceAccountToken(t *testing.T, ns, name string) string {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	g.Expect(env.Client.Create(ctx, sa)).To(Succeed())
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	g.Expect(env.Client.SubResource("token").Create(ctx, sa, req)).To(Succeed())
	g.Expect(req.Status.Token).NotTo(BeEmpty())
	return req.Status.Token
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
