package cacheread_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/cacheread"
	"github.com/metalwire/metalwire/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// TestSharedReadsTheCachesOwnObject: the object named is found among the namespace's others and
// handed over as the cache holds it (two reads see the same status entries in memory, where a
// client.Get copies them each time); a name the namespace lacks is not found, with no error.
func TestSharedReadsTheCachesOwnObject(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := env.NewNamespace(t)
	for _, name := range []string{"a", "b"} {
		tmpl := &infrav1.Metal3DataTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: infrav1.Metal3DataTemplateSpec{ClusterName: "c-" + name}}
		g.Expect(env.Client.Create(ctx, tmpl)).To(Succeed())
		tmpl.Status.Indexes = []infrav1.IndexEntry{{Name: "claim-1", Index: 0}, {Name: "claim-2", Index: 1}}
		g.Expect(env.Client.Status().Update(ctx, tmpl)).To(Succeed())
	}
	c, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme, DefaultNamespaces: map[string]cache.Config{ns: {}}})
	g.Expect(err).NotTo(HaveOccurred())
	go func() { _ = c.Start(ctx) }()
	g.Expect(c.WaitForCacheSync(ctx)).To(BeTrue())

	read := func(name string) (found bool, spec string, indexes []infrav1.IndexEntry) {
		found, err := cacheread.Shared(ctx, c, &infrav1.Metal3DataTemplateList{}, client.ObjectKey{Namespace: ns, Name: name}, func(o client.Object) {
			t := o.(*infrav1.Metal3DataTemplate)
			spec, indexes = t.Spec.ClusterName, t.Status.Indexes
		})
		g.Expect(err).NotTo(HaveOccurred())
		return found, spec, indexes
	}
	g.Eventually(func() int {
		_, _, idx := read("b")
		return len(idx)
	}, 10*time.Second).Should(Equal(2), "the cache shows the status written")

	found, spec, first := read("b")
	g.Expect(found).To(BeTrue())
	g.Expect(spec).To(Equal("c-b"), "the object named, not another of the namespace")
	_, _, second := read("b")
	g.Expect(&second[0]).To(BeIdenticalTo(&first[0]), "the cache's own status, not a copy per read")

	var got infrav1.Metal3DataTemplate
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "b"}, &got)).To(Succeed())
	g.Expect(&got.Status.Indexes[0]).NotTo(BeIdenticalTo(&first[0]), "client.Get copies (what Shared spares)")

	found, _, _ = read("missing")
	g.Expect(found).To(BeFalse())
}
