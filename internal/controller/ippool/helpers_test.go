package ippool_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/ippool"
	"github.com/metalwire/metalwire/internal/manager/managertest"
)

// newNamespace gives the test a namespace of its own.
func newNamespace(t *testing.T) string { return env.NewNamespace(t) }

// manager is a running controller manager with the IPPool controller, watching one namespace.
type manager struct {
	stop func()
}

// startManager starts the image's manager (managertest) reconciling namespace ns with the IPPool
// controller alone, its status written every 100 ms.
func startManager(t *testing.T, ns string) *manager {
	t.Helper()
	mgr := managertest.New(t, env, ns, nil)
	r := &ippool.Reconciler{StatusInterval: 100 * time.Millisecond}
	NewWithT(t).Expect(r.SetupWithManager(context.Background(), mgr, 4)).To(Succeed())
	return &manager{stop: managertest.Run(t, mgr)}
}

func addr(s string) *ipamv1.IPAddressStr { return ptr.To(ipamv1.IPAddressStr(s)) }

// newPool is an IPPool in ns; edit returns it changed as the test needs.
func newPool(ns, name string, edit func(*ipamv1.IPPool)) *ipamv1.IPPool {
	p := &ipamv1.IPPool{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: ipamv1.IPPoolSpec{
			NamePrefix: name,
			Prefix:     24,
			Gateway:    addr("192.168.0.1"),
			DNSServers: []ipamv1.IPAddressStr{"8.8.8.8"},
			Pools:      []ipamv1.Pool{{Start: addr("192.168.0.10"), End: addr("192.168.0.20")}},
		},
	}
	if edit != nil {
		edit(p)
	}
	return p
}

func newClaim(ns, name, pool string, annotations map[string]string) *ipamv1.IPClaim {
	return &ipamv1.IPClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: annotations},
		Spec:       ipamv1.IPClaimSpec{Pool: corev1.ObjectReference{Name: pool}},
	}
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		NewWithT(t).Expect(env.Client.Create(context.Background(), o)).To(Succeed(), "creating %s", o.GetName())
	}
}

// claimAddress waits until the claim holds an address and returns it (as the IPAddress says).
func claimAddress(t *testing.T, ns, name string) string {
	t.Helper()
	var got string
	NewWithT(t).Eventually(func(g Gomega) {
		c := &ipamv1.IPClaim{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, c)).To(Succeed())
		g.Expect(c.Status.Address).NotTo(BeNil(), "claim %s has no address yet: %+v", name, c.Status)
		a := &ipamv1.IPAddress{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: c.Status.Address.Name}, a)).To(Succeed())
		g.Expect(a.Spec.Claim.Name).To(Equal(name))
		got = string(a.Spec.Address)
	}).WithTimeout(20 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
	return got
}

// claimReady waits until the claim's Ready condition has the reason and returns the condition.
func claimReady(t *testing.T, ns, name, reason string) (*metav1.Condition, *ipamv1.IPClaim) {
	t.Helper()
	var cond *metav1.Condition
	c := &ipamv1.IPClaim{}
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, c)).To(Succeed())
		cond = meta.FindStatusCondition(c.Status.Conditions, ipamv1.ReadyCondition)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Reason).To(Equal(reason), "message: %s", cond.Message)
	}).WithTimeout(20 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
	return cond, c
}

// poolReady waits until the pool's Ready condition has the reason and returns the pool.
func poolReady(t *testing.T, ns, name, reason string) *ipamv1.IPPool {
	t.Helper()
	p := &ipamv1.IPPool{}
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, p)).To(Succeed())
		cond := meta.FindStatusCondition(p.Status.Conditions, ipamv1.ReadyCondition)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Reason).To(Equal(reason), "message: %s", cond.Message)
	}).WithTimeout(20 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
	return p
}

// addressesOf lists the pool's IPAddresses, address -> claim.
func addressesOf(t *testing.T, ns, pool string) map[string]string {
	t.Helper()
	list := &ipamv1.IPAddressList{}
	NewWithT(t).Expect(env.Client.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
	out := map[string]string{}
	for _, a := range list.Items {
		if a.Spec.Pool.Name == pool {
			out[string(a.Spec.Address)] = a.Spec.Claim.Name
		}
	}
	return out
}
