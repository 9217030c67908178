package preprovisioning_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
)

// With --watch-filter=team-a, a host naming team-a's template is rendered, its IPClaim and
// Secret labelled team-a; a host naming team-b's template, team-b's template and pool, and a
// host naming a template that does not exist are never written.
func TestWatchFilterRendersOnlyTheLabelledTemplatesHosts(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	startManagerWith(t, "team-a", ns)
	labelled := func(o client.Object, team string) client.Object {
		o.SetLabels(map[string]string{clusterv1.WatchLabel: team})
		return o
	}
	paused := infrav1.PreprovisioningPausedAnnotationValue
	theirs := []client.Object{
		labelled(newPool(ns, "pool-b", "", 20, 10, 20), "team-b"),
		labelled(newTemplate(ns, "tmpl-b", "pool-b"), "team-b"),
		newHost(ns, "host-b", prefix+"tmpl-b", paused, 2),
		newHost(ns, "host-nowhere", prefix+"missing", paused, 3),
	}
	create(t, theirs...)
	create(t, labelled(newPool(ns, "pool-a", "", 10, 10, 20), "team-a"), labelled(newTemplate(ns, "tmpl-a", "pool-a"), "team-a"),
		newHost(ns, "host-a", prefix+"tmpl-a", paused, 1))

	waitRendered(t, ns, "host-a")
	claimedAddress(t, ns, "host-a-pool-a")
	g.Expect(getSecret(g, ns, "host-a-preprov-networkdata").Labels).To(HaveKeyWithValue(clusterv1.WatchLabel, "team-a"))
	g.Expect(claimLabels(g, ns, "host-a-pool-a")).To(HaveKeyWithValue(clusterv1.WatchLabel, "team-a"))
	g.Eventually(func(g Gomega) {
		g.Expect(getTemplate(g, ns, "tmpl-a").Status.Rendered).To(BeEquivalentTo(1))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	versions := map[client.Object]string{}
	for _, o := range theirs {
		versions[o] = o.GetResourceVersion()
	}
	g.Consistently(func(g Gomega) {
		for _, o := range theirs {
			got := o.DeepCopyObject().(client.Object)
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(o), got)).To(Succeed())
			g.Expect(got.GetResourceVersion()).To(Equal(versions[o]), "%T %s was written", o, o.GetName())
		}
		g.Expect(claims(g, ns)).To(ConsistOf("host-a-pool-a"))
		for _, name := range []string{"host-b-preprov-networkdata", "host-nowhere-preprov-networkdata"} {
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.Secret{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "Secret %s was written", name)
		}
	}).WithTimeout(3 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
}

func claimLabels(g Gomega, ns, name string) map[string]string {
	c := &ipamv1.IPClaim{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, c)).To(Succeed())
	return c.Labels
}
