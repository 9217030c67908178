package simulator_test

import (
	"context"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	"github.com/metalwire/metalwire/internal/simulator"
	"github.com/metalwire/metalwire/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// testDelays keep each timed state long enough to be seen and the tests quick.
var testDelays = simulator.Delays{
	Registering:    300 * time.Millisecond,
	Inspecting:     300 * time.Millisecond,
	Provisioning:   300 * time.Millisecond,
	Deprovisioning: 300 * time.Millisecond,
}

// run is one simulator running in a namespace of its own, with what it reported.
type run struct {
	sim *simulator.Simulator
	ns  string
	dir string

	mu          sync.Mutex
	transitions map[string][]bmov1.ProvisioningState
}

// startSimulator runs a simulator in a manager that sees only a fresh namespace, so tests do not
// see each other's hosts.
func startSimulator(t *testing.T) *run {
	t.Helper()
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "sim-"}}
	g.Expect(env.Client.Create(ctx, ns)).To(Succeed())

	skipNameValidation := true // each test runs its own "bmo-simulator" controller
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:     env.Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Cache:      cache.Options{DefaultNamespaces: map[string]cache.Config{ns.Name: {}}},
		Controller: config.Controller{SkipNameValidation: &skipNameValidation},
	})
	g.Expect(err).NotTo(HaveOccurred())
	r := &run{ns: ns.Name, dir: t.TempDir(), transitions: map[string][]bmov1.ProvisioningState{}}
	r.sim = &simulator.Simulator{
		Dir:    r.dir,
		Delays: testDelays,
		OnTransition: func(tr simulator.Transition) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.transitions[tr.Host.Name] = append(r.transitions[tr.Host.Name], tr.To)
		},
	}
	g.Expect(r.sim.SetupWithManager(ctx, mgr)).To(Succeed())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

func (r *run) statesOf(host string) []bmov1.ProvisioningState {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]bmov1.ProvisioningState(nil), r.transitions[host]...)
}

func (r *run) key(host string) client.ObjectKey { return client.ObjectKey{Namespace: r.ns, Name: host} }

// host reads a host through our typed subset.
func (r *run) host(g Gomega, name string) *bmov1.BareMetalHost {
	h := &bmov1.BareMetalHost{}
	g.Expect(env.Client.Get(context.Background(), r.key(name), h)).To(Succeed())
	return h
}

// raw reads a host with every field it has.
func (r *run) raw(g Gomega, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(bmov1.GroupVersion.WithKind("BareMetalHost"))
	g.Expect(env.Client.Get(context.Background(), r.key(name), u)).To(Succeed())
	return u
}

// state returns a function for Eventually/Consistently that reads a host's state.
func (r *run) state(name string) func() bmov1.ProvisioningState {
	return func() bmov1.ProvisioningState {
		h := &bmov1.BareMetalHost{}
		if err := env.Client.Get(context.Background(), r.key(name), h); err != nil {
			return "<" + bmov1.ProvisioningState(err.Error()) + ">"
		}
		return h.Status.Provisioning.State
	}
}

// patchSpec changes a host's spec as a controller must: a merge patch of only what changed.
func (r *run) patchSpec(g Gomega, name string, change func(h *bmov1.BareMetalHost)) {
	h := r.host(g, name)
	before := h.DeepCopy()
	change(h)
	g.Expect(env.Client.Patch(context.Background(), h, client.MergeFrom(before))).To(Succeed())
}

func (r *run) secret(g Gomega, name string, data map[string]string) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.ns}, StringData: data}
	g.Expect(env.Client.Create(context.Background(), s)).To(Succeed())
}

func field(u *unstructured.Unstructured, path ...string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
	return v
}
