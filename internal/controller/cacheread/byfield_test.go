package cacheread_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/cacheread"
)

const poolField = "spec.pool.name"

// TestByFieldFindsWhatListFinds: the claims ByField hands over for a pool are those a List by the
// same field index returns, per namespace and across namespaces, through a cache of every
// namespace (read from the informer's index, without a copy: two reads see the same objects in
// memory) and a cache limited to some namespaces (one informer each: read through List). It
// fails when controller-runtime names its field indexes otherwise than ByField expects.
func TestByFieldFindsWhatListFinds(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns1, ns2 := env.NewNamespace(t), env.NewNamespace(t)
	claims := map[string][]string{ns1: {"a", "a", "b"}, ns2: {"a", "b", "b"}}
	for ns, pools := range claims {
		for i, pool := range pools {
			c := &ipamv1.IPClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pool + "-" + string(rune('0'+i))},
				Spec: ipamv1.IPClaimSpec{Pool: corev1.ObjectReference{Name: pool}}}
			g.Expect(env.Client.Create(ctx, c)).To(Succeed())
		}
	}

	caches := map[string]cache.Options{
		"all namespaces": {Scheme: env.Scheme},
		"two namespaces": {Scheme: env.Scheme, DefaultNamespaces: map[string]cache.Config{ns1: {}, ns2: {}}},
	}
	for name, opts := range caches {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			c, err := cache.New(env.Config, opts)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(c.IndexField(ctx, &ipamv1.IPClaim{}, poolField, func(o client.Object) []string {
				return []string{o.(*ipamv1.IPClaim).Spec.Pool.Name}
			})).To(Succeed())
			go func() { _ = c.Start(ctx) }()
			g.Expect(c.WaitForCacheSync(ctx)).To(BeTrue())

			byField := func(ns, pool string) (names []string, objs []client.Object) {
				g.Expect(cacheread.ByField(ctx, c, &ipamv1.IPClaim{}, &ipamv1.IPClaimList{}, ns, poolField, pool, func(o client.Object) {
					names = append(names, o.GetNamespace()+"/"+o.GetName())
					objs = append(objs, o)
				})).To(Succeed())
				slices.Sort(names)
				return names, objs
			}
			listed := func(ns, pool string) []string {
				list := &ipamv1.IPClaimList{}
				g.Expect(c.List(ctx, list, client.InNamespace(ns), client.MatchingFields{poolField: pool})).To(Succeed())
				names := []string{}
				for i := range list.Items {
					names = append(names, list.Items[i].Namespace+"/"+list.Items[i].Name)
				}
				slices.Sort(names)
				return names
			}
			g.Eventually(func() []string { n, _ := byField("", "b"); return n }, 10*time.Second).Should(HaveLen(3))
			for _, q := range []struct{ ns, pool string }{{ns1, "a"}, {ns2, "a"}, {ns1, "b"}, {"", "a"}, {"", "b"}, {ns1, "missing"}} {
				want := listed(q.ns, q.pool)
				got, _ := byField(q.ns, q.pool)
				g.Expect(got).To(ConsistOf(want), "namespace %q, pool %q", q.ns, q.pool)
			}
			names, _ := byField(ns1, "a")
			g.Expect(names).To(Equal([]string{ns1 + "/a-0", ns1 + "/a-1"}), "the namespace's claims of the pool, not another's")

			if opts.DefaultNamespaces == nil {
				_, first := byField(ns2, "b")
				_, second := byField(ns2, "b")
				g.Expect(first).To(HaveLen(2))
				for _, o := range first {
					g.Expect(second).To(ContainElement(BeIdenticalTo(o)), "the cache's own objects, not a copy per read")
				}
			}
		})
	}
}

// TestByFieldCostsNotTheObjects: reading a pool's claims through ByField allocates a few words a
// claim (the index's list of them), where List, even without a deep copy, copies every claim's
// struct; the figures are logged for docs/scale-allocation.md.
func TestByFieldCostsNotTheObjects(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := env.NewNamespace(t)
	const n = 300
	for i := range n {
		c := &ipamv1.IPClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("claim-%d", i),
			Labels: map[string]string{"cluster.x-k8s.io/cluster-name": "c"}},
			Spec: ipamv1.IPClaimSpec{Pool: corev1.ObjectReference{Name: "pool"}}}
		g.Expect(env.Client.Create(ctx, c)).To(Succeed())
	}
	c, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.IndexField(ctx, &ipamv1.IPClaim{}, poolField, func(o client.Object) []string {
		return []string{o.(*ipamv1.IPClaim).Spec.Pool.Name}
	})).To(Succeed())
	go func() { _ = c.Start(ctx) }()
	g.Expect(c.WaitForCacheSync(ctx)).To(BeTrue())
	count := func() (seen int) {
		g.Expect(cacheread.ByField(ctx, c, &ipamv1.IPClaim{}, &ipamv1.IPClaimList{}, ns, poolField, "pool", func(client.Object) { seen++ })).To(Succeed())
		return seen
	}
	g.Eventually(count, 10*time.Second).Should(Equal(n))

	const reads = 50
	perClaim := func(read func()) float64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for range reads {
			read()
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / reads / n
	}
	byField := perClaim(func() { count() })
	listed := perClaim(func() {
		g.Expect(c.List(ctx, &ipamv1.IPClaimList{}, client.InNamespace(ns), client.MatchingFields{poolField: "pool"}, client.UnsafeDisableDeepCopy)).To(Succeed())
	})
	t.Logf("bytes allocated a claim a read: ByField %.0f, List without a deep copy %.0f", byField, listed)
	g.Expect(byField).To(BeNumerically("<", 64), "a few words a claim, not a copy of it")
}
