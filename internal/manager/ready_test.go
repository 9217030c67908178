package manager_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller"
	"github.com/metalwire/metalwire/internal/manager"
)

// /readyz answers 200 only once every informer the controllers use has listed its kind, and
// the list of those informers is whole: after the controllers have run over objects of every
// group, no informer exists that was not made (and waited for) before the manager said ready.
func TestReadyOnlyOnceEveryInformerHasListed(t *testing.T) {
	g := NewWithT(t)
	o := manager.NewOptions()
	probe := freeAddr(t)
	o.RestConfig, o.ProbeAddr, o.MetricsAddr, o.WebhookPort = env.Config, probe, "0", 0
	o.LeaderElect, o.SkipNameValidation = false, true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m, err := manager.New(ctx, o, controller.AllGroups)
	g.Expect(err).NotTo(HaveOccurred())
	done := make(chan error, 1)
	go func() { done <- m.Start(ctx) }()
	defer func() { cancel(); g.Eventually(done, 30*time.Second).Should(Receive(BeNil())) }()

	ready := func() bool {
		resp, err := http.Get("http://" + probe + "/readyz")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	g.Eventually(ready, timeout, 20*time.Millisecond).Should(BeTrue())
	// At the first 200, every informer of controller.Informers has listed.
	expected := map[string]bool{}
	for _, obj := range controller.Informers(controller.AllGroups) {
		inf, err := m.GetCache().GetInformer(ctx, obj, cache.BlockUntilSynced(false))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(inf.HasSynced()).To(BeTrue(), "%T had not listed when /readyz said ready", obj)
		gvk, err := apiutil.GVKForObject(obj, env.Scheme)
		g.Expect(err).NotTo(HaveOccurred())
		expected[gvk.String()] = true
	}

	// Work for every group: the data chain and IPAM (a cluster unpaused), the fabric (a switch
	// nobody can reach, a host, a ClusterNetwork).
	ns := env.NewNamespace(t)
	pausedClusterConverges(t, ns)
	g.Expect(env.Client.Create(ctx, &netv1.NetworkDevice{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nd1"},
		Spec: netv1.NetworkDeviceSpec{Switches: []netv1.Switch{{
			Name: "leaf1", Address: "127.0.0.1", Port: 1, NetworkOS: netv1.NetworkOSOpenvSwitch, // nothing listens there
			CredentialsRef: &netv1.SecretReference{Name: "leaf1-ovsdb"},
		}}},
	})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &netv1.NIC{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "h1"},
		Spec: netv1.NICSpec{Node: "h1", NetworkDeviceRef: "nd1", NICs: []netv1.HostNIC{{
			NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: "leaf1", Port: intstr.FromString("p1")}},
			Capability:    netv1.NICCapability{Speed: 1000},
		}}},
	})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &netv1.ClusterNetwork{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cn"},
		Spec: netv1.ClusterNetworkSpec{NetworkDeviceRef: "nd1", VLANRange: "1000-1001",
			Networks: []netv1.Network{{Name: "control", NICHint: netv1.NICHint{Speed: 1000}}}},
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		cn := &netv1.ClusterNetwork{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cn"}, cn)).To(Succeed())
		g.Expect(cn.Status.Available).To(HaveKey("h1"))
	}, timeout, poll).Should(Succeed())

	for _, kind := range m.Informers() {
		g.Expect(expected).To(HaveKey(kind), "an informer for %s was made after /readyz said ready: add its kind to controller.Informers", kind)
	}
}
