package metal3data_test

import (
	"context"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// laggingClient reads Metal3Data and Metal3DataClaims as an informer cache that trails the
// writes does: once lag is called, every Get of one returns the last copy served before it that
// remember kept, while the API server holds what was written since.
type laggingClient struct {
	client.Client
	remember func(client.Object) bool
	mu       sync.Mutex
	lagging  bool
	kept     map[client.ObjectKey]client.Object
}

func newLaggingClient(remember func(client.Object) bool) *laggingClient {
	return &laggingClient{remember: remember, kept: map[client.ObjectKey]client.Object{}}
}

func (c *laggingClient) lag() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lagging = true
}

func (c *laggingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.kept[key]; ok && c.lagging {
		switch o := obj.(type) {
		case *infrav1.Metal3Data:
			if old, ok := old.(*infrav1.Metal3Data); ok {
				*o = *old.DeepCopy()
				return nil
			}
		case *infrav1.Metal3DataClaim:
			if old, ok := old.(*infrav1.Metal3DataClaim); ok {
				*o = *old.DeepCopy()
				return nil
			}
		}
	}
	if err := c.Client.Get(ctx, key, obj, opts...); err != nil || c.lagging {
		return err
	}
	switch obj.(type) {
	case *infrav1.Metal3Data, *infrav1.Metal3DataClaim:
		if c.remember(obj) {
			c.kept[key] = obj.DeepCopyObject().(client.Object)
		}
	}
	return nil
}

// lagOnFixedHost sets up a host without the NIC the template names, waits for the error, starts
// the lag, then gives the host the NIC.
func lagOnFixedHost(t *testing.T, ns string, lagging *laggingClient) {
	t.Helper()
	startManager(t, ns, managerOptions{dataClient: func(c client.Client) client.Client {
		lagging.Client = c
		return lagging
	}})
	pool(t, ns, "prov", "192.168.0.10", "192.168.0.20", 24, "")
	template(t, ns, "tmpl", specOf(t, simpleTemplate))
	h := host(t, ns, "node-0", nil, nil, "", "eno1=52:54:00:00:00:01")
	machine(t, ns, "m3m-0", "tmpl", machineOpts{host: "node-0"})
	expectBlocked(t, ns, "m3m-0", infrav1.DataRenderFailedReason, `host node-0 has no NIC "eth0"`, true)

	lagging.lag()
	addNIC(t, h, "eth0", "52:54:00:00:00:02")
}

// TestRenderedOnALaggingCacheClearsTheError: the host is fixed while the controller's cache
// still shows the Metal3Data and its claim as they were before the error was written. The
// rendering that follows must leave no error behind on either: a Ready Metal3Data whose status
// still names a missing NIC (or a claim Ready with an error) would stay so, as nothing renders a
// Ready Metal3Data again.
func TestRenderedOnALaggingCacheClearsTheError(t *testing.T) {
	ns := newNamespace(t)
	lagOnFixedHost(t, ns, newLaggingClient(func(o client.Object) bool {
		switch o := o.(type) {
		case *infrav1.Metal3Data:
			return o.Status.ErrorMessage == nil && len(o.Finalizers) > 0
		case *infrav1.Metal3DataClaim:
			return o.Status.ErrorMessage == nil
		}
		return false
	}))

	g := NewWithT(t)
	data := renderedData(t, ns, "m3m-0")
	g.Expect(data.Status.ErrorMessage).To(BeNil(), "a rendered Metal3Data keeps no error")
	g.Expect(condition(data.Status.Conditions, infrav1.DataSecretsReadyCondition).Status).To(Equal(metav1.ConditionTrue))
	NewWithT(t).Eventually(func(g Gomega) {
		c := getClaim(g, ns, "m3m-0")
		g.Expect(condition(c.Status.Conditions, infrav1.DataClaimReadyCondition).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Status.ErrorMessage).To(BeNil(), "a claim served by a rendered Metal3Data keeps no error")
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// TestALaggingCacheDoesNotTakeTheClaimBack: the Metal3Data is rendered while the controller's
// cache still shows its error, and is woken again before the cache shows the rendering. That
// reconcile knows its copy is older than its write and does nothing; it must not report the old
// error to the claim either, which would show the claim failed with its Metal3Data Ready.
func TestALaggingCacheDoesNotTakeTheClaimBack(t *testing.T) {
	ns := newNamespace(t)
	lagOnFixedHost(t, ns, newLaggingClient(func(o client.Object) bool {
		d, ok := o.(*infrav1.Metal3Data)
		return ok && d.Status.ErrorMessage != nil
	}))

	data := renderedData(t, ns, "m3m-0")
	served := func(g Gomega) {
		c := getClaim(g, ns, "m3m-0")
		g.Expect(c.Status.ErrorMessage).To(BeNil(), "the claim of a rendered Metal3Data shows no error")
		g.Expect(condition(c.Status.Conditions, infrav1.DataClaimReadyCondition).Status).To(Equal(metav1.ConditionTrue))
	}
	NewWithT(t).Eventually(served).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	// Something else wakes the Metal3Data while the cache still trails: an annotation of its own.
	before := data.DeepCopy()
	data.Annotations = map[string]string{"example.com/touched": "yes"}
	NewWithT(t).Expect(env.Client.Patch(context.Background(), data, client.MergeFrom(before))).To(Succeed())
	NewWithT(t).Consistently(served).WithTimeout(3 * time.Second).WithPolling(poll).Should(Succeed())
}
