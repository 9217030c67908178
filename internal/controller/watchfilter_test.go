package controller_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller"
	"github.com/metalwire/metalwire/internal/manager"
	"github.com/metalwire/metalwire/internal/manager/managertest"
	"github.com/metalwire/metalwire/internal/testenv"
)

// With --watch-filter (Options.WatchFilter) the infrastructure controllers reconcile only the
// objects labelled cluster.x-k8s.io/watch-filter=<value>; another manager's (or nobody's) are
// left untouched.
func TestWatchFilterLeavesOtherObjectsAlone(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env, err := testenv.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })

	startFilteredManager(t, env, []controller.Group{controller.Infrastructure}, "team-a")

	ns := env.NewNamespace(t)
	pair := func(name string, labels map[string]string) *infrav1.Metal3Cluster {
		cluster := &clusterv1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			Spec: clusterv1.ClusterSpec{
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Cluster", Name: name},
			},
		}
		g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
		m3c := &infrav1.Metal3Cluster{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: ns, Name: name,
				Labels:          map[string]string{clusterv1.ClusterNameLabel: name},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: name, UID: cluster.UID}},
			},
			Spec: infrav1.Metal3ClusterSpec{ControlPlaneEndpoint: infrav1.APIEndpoint{Host: "192.168.111.249", Port: 6443}},
		}
		for k, v := range labels {
			m3c.Labels[k] = v
		}
		g.Expect(env.Client.Create(ctx, m3c)).To(Succeed())
		return m3c
	}
	ours := pair("ours", map[string]string{clusterv1.WatchLabel: "team-a"})
	theirs := pair("theirs", map[string]string{clusterv1.WatchLabel: "team-b"})
	nobodys := pair("nobodys", nil)

	get := func(g Gomega, m3c *infrav1.Metal3Cluster) *infrav1.Metal3Cluster {
		out := &infrav1.Metal3Cluster{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(m3c), out)).To(Succeed())
		return out
	}
	g.Eventually(func(g Gomega) {
		g.Expect(get(g, ours).Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
	}, time.Minute, 200*time.Millisecond).Should(Succeed())
	g.Consistently(func(g Gomega) {
		for _, m3c := range []*infrav1.Metal3Cluster{theirs, nobodys} {
			got := get(g, m3c)
			g.Expect(got.Finalizers).To(BeEmpty(), "%s was reconciled", m3c.Name)
			g.Expect(got.Status.Conditions).To(BeEmpty(), "%s was reconciled", m3c.Name)
		}
	}, 3*time.Second, 200*time.Millisecond).Should(Succeed())
}

// startFilteredManager runs the image's manager (managertest) with the groups' controllers as
// `metalwire --watch-filter=<value>` would, until the test ends.
func startFilteredManager(t *testing.T, env *testenv.Env, groups []controller.Group, value string) {
	t.Helper()
	managertest.Start(t, env, "", groups, func(o *manager.Options) { o.WatchFilter = value })
}
