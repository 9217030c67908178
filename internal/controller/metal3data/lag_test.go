package metal3data_test

import (
	"context"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// laggingClient reads Metal3Data and Metal3DataClaims as an informer cache that trails the
// writes does: once lag is called, every Get of one returns the last copy served before it that
// carried no error, while the API server holds the error written since.
type laggingClient struct {
	client.Client
	mu      sync.Mutex
	lagging bool
	clean   map[client.ObjectKey]client.Object
}

func (c *laggingClient) lag() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lagging = true
}

func (c *laggingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.clean[key]; ok && c.lagging {
		switch o := obj.(type) {
		case *infrav1.Metal3Data:
			*o = *old.(*infrav1.Metal3Data).DeepCopy()
			return nil
		case *infrav1.Metal3DataClaim:
			*o = *old.(*infrav1.Metal3DataClaim).DeepCopy()
			return nil
		}
	}
	if err := c.Client.Get(ctx, key, obj, opts...); err != nil || c.lagging {
		return err
	}
	switch o := obj.(type) {
	case *infrav1.Metal3Data:
		if o.Status.ErrorMessage == nil && len(o.Finalizers) > 0 {
			c.clean[key] = o.DeepCopy()
		}
	case *infrav1.Metal3DataClaim:
		if o.Status.ErrorMessage == nil {
			c.clean[key] = o.DeepCopy()
		}
	}
	return nil
}

// TestRenderedOnALaggingCacheClearsTheError: the host is fixed while the controller's cache
// still shows the Metal3Data and its claim as they were before the error was written. The
// rendering that follows must leave no error behind on either: a Ready Metal3Data whose status
// still names a missing NIC (or a claim Ready with an error) would stay so, as nothing renders a
// Ready Metal3Data again.
func TestRenderedOnALaggingCacheClearsTheError(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	lagging := &laggingClient{clean: map[client.ObjectKey]client.Object{}}
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
	g := NewWithT(t)
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(h), h)).To(Succeed())
	h.Status.HardwareDetails.NIC = append(h.Status.HardwareDetails.NIC, bmov1.NIC{Name: "eth0", MAC: "52:54:00:00:00:02"})
	g.Expect(env.Client.Status().Update(ctx, h)).To(Succeed())

	data := renderedData(t, ns, "m3m-0")
	g.Expect(data.Status.ErrorMessage).To(BeNil(), "a rendered Metal3Data keeps no error")
	g.Expect(condition(data.Status.Conditions, infrav1.DataSecretsReadyCondition).Status).To(Equal(metav1.ConditionTrue))
	NewWithT(t).Eventually(func(g Gomega) {
		c := getClaim(g, ns, "m3m-0")
		g.Expect(condition(c.Status.Conditions, infrav1.DataClaimReadyCondition).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Status.ErrorMessage).To(BeNil(), "a claim served by a rendered Metal3Data keeps no error")
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}
