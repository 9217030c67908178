package fieldindex_test

import (
	"context"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/fieldindex"
	"github.com/metalwire/metalwire/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

const (
	byPool      = "test.pool"       // registered for Lists within a namespace
	byPoolEvery = "test.pool.every" // registered with AcrossNamespaces
)

// TestANamespacedIndexFilesEachObjectOnce: a List within a namespace finds through a registered
// index what it finds through one read across namespaces, in a cache of every namespace and in
// one limited to some; the namespaced index files each object under one key where the other
// files it under two; and only the one registered AcrossNamespaces answers a List without a
// namespace.
func TestANamespacedIndexFilesEachObjectOnce(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns1, ns2 := env.NewNamespace(t), env.NewNamespace(t)
	claims := map[string][]string{ns1: {"a", "a", "b"}, ns2: {"a", "b", "c"}}
	for ns, pools := range claims {
		for i, pool := range pools {
			c := &ipamv1.IPClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pool + "-" + string(rune('0'+i))},
				Spec: ipamv1.IPClaimSpec{Pool: corev1.ObjectReference{Name: pool}}}
			g.Expect(env.Client.Create(ctx, c)).To(Succeed())
		}
	}
	pool := func(o client.Object) []string { return []string{o.(*ipamv1.IPClaim).Spec.Pool.Name} }

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
			g.Expect(fieldindex.Register(ctx, c,
				fieldindex.Index{Object: &ipamv1.IPClaim{}, Field: byPool, Keys: pool},
				fieldindex.Index{Object: &ipamv1.IPClaim{}, Field: byPoolEvery, Keys: pool, AcrossNamespaces: true},
			)).To(Succeed())
			go func() { _ = c.Start(ctx) }()
			g.Expect(c.WaitForCacheSync(ctx)).To(BeTrue())

			listed := func(opts ...client.ListOption) []string {
				list := &ipamv1.IPClaimList{}
				g.Expect(c.List(ctx, list, opts...)).To(Succeed())
				names := []string{}
				for _, o := range list.Items {
					names = append(names, o.Namespace+"/"+o.Name)
				}
				slices.Sort(names)
				return names
			}
			for _, ns := range []string{ns1, ns2} {
				for _, p := range []string{"a", "b", "c", "none"} {
					want := listed(client.InNamespace(ns), client.MatchingFields{byPoolEvery: p})
					g.Expect(listed(client.InNamespace(ns), client.MatchingFields{byPool: p})).To(Equal(want), "pool %s in %s", p, ns)
				}
			}
			g.Expect(listed(client.InNamespace(ns1), client.MatchingFields{byPool: "a"})).To(Equal([]string{ns1 + "/a-0", ns1 + "/a-1"}))
			g.Expect(listed(client.MatchingFields{byPoolEvery: "b"})).To(Equal(sorted(ns1+"/b-2", ns2+"/b-1")))
			g.Expect(listed(client.MatchingFields{byPool: "b"})).To(BeEmpty(), "a namespaced index does not answer across namespaces")

			inf, err := c.GetInformer(ctx, &ipamv1.IPClaim{})
			g.Expect(err).NotTo(HaveOccurred())
			if shared, ok := inf.(toolscache.SharedIndexInformer); ok { // one indexer for every namespace
				ix := shared.GetIndexer()
				// Six claims in two namespaces on five (namespace, pool) pairs.
				g.Expect(ix.ListIndexFuncValues(fieldindex.IndexName(byPool))).To(HaveLen(5))
				g.Expect(ix.ListIndexFuncValues(fieldindex.IndexName(byPoolEvery))).To(HaveLen(5+3), "and three pools across namespaces")
			}
		})
	}
}

func sorted(s ...string) []string {
	slices.Sort(s)
	return s
}
