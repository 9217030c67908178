package mapping_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/mapping"
	"github.com/metalwire/metalwire/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// TestListedRequestsWhatIsListedAndKept: every object listed and kept is one request; a list
// that fails (here: a field selector the API server refuses) is no request rather than a panic.
func TestListedRequestsWhatIsListedAndKept(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	for _, name := range []string{"a", "b", "c"} {
		g.Expect(env.Client.Create(ctx, &infrav1.Metal3Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})).To(Succeed())
	}
	req := func(name string) reconcile.Request {
		return reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}}
	}

	g.Expect(mapping.Listed(ctx, env.Client, &infrav1.Metal3ClusterList{}, "clusters", nil, client.InNamespace(ns))).
		To(ConsistOf(req("a"), req("b"), req("c")))
	g.Expect(mapping.Listed(ctx, env.Client, &infrav1.Metal3ClusterList{}, "clusters", func(o client.Object) bool { return o.GetName() != "b" }, client.InNamespace(ns))).
		To(ConsistOf(req("a"), req("c")))
	g.Expect(mapping.Listed(ctx, env.Client, &infrav1.Metal3ClusterList{}, "clusters", nil, client.InNamespace(ns),
		client.MatchingFields{"no.such.field": "x"})).To(BeEmpty())
}
