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

// TestListedToRequestsWhatTheListedName: each object listed names the one to reconcile (here a
// Metal3Machine its Metal3Cluster, through its cluster-name label); one that names none is left out.
func TestListedToRequestsWhatTheListedName(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	for name, cluster := range map[string]string{"m1": "c1", "m2": "c2", "m3": ""} {
		m := &infrav1.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"cluster": cluster}}}
		g.Expect(env.Client.Create(ctx, m)).To(Succeed())
	}
	to := func(o client.Object) (client.ObjectKey, bool) {
		c := o.GetLabels()["cluster"]
		return client.ObjectKey{Namespace: o.GetNamespace(), Name: c}, c != ""
	}
	g.Expect(mapping.ListedTo(ctx, env.Client, &infrav1.Metal3MachineList{}, "machines", to, client.InNamespace(ns))).
		To(ConsistOf(reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "c1"}},
			reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "c2"}}))
}
