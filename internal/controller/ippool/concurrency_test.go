package ippool_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
)

// createClaims creates n claims named <prefix>-<i> on pool from 8 goroutines. If deleteAfter,
// each claim is deleted right after it is created.
func createClaims(t *testing.T, ns, pool, prefix string, n int, deleteAfter bool) {
	t.Helper()
	const writers = 8
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := w; i < n; i += writers {
				c := newClaim(ns, fmt.Sprintf("%s-%d", prefix, i), pool, nil)
				if err := env.Client.Create(context.Background(), c); err != nil {
					errs <- err
					return
				}
				if deleteAfter {
					if err := env.Client.Delete(context.Background(), c); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// Two managers, no leader election, one API server: 2,000 claims from 8 goroutines all get an
// address, and no address is given twice, nor any claim two addresses.
func TestTwoManagersNeverAllocateTwice(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns)
	startManager(t, ns)
	create(t, newPool(ns, "big", func(p *ipamv1.IPPool) {
		p.Spec.Prefix = 16
		p.Spec.Gateway = addr("10.0.0.1")
		p.Spec.Pools = []ipamv1.Pool{{Subnet: ptrSubnet("10.0.0.0/16")}}
	}))
	const n = 2000
	start := time.Now()
	createClaims(t, ns, "big", "claim", n, false)
	created := time.Since(start)

	g.Eventually(func(g Gomega) {
		list := &ipamv1.IPClaimList{}
		g.Expect(env.Client.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
		served := 0
		for _, c := range list.Items {
			if c.Status.Address != nil {
				served++
			}
		}
		g.Expect(served).To(Equal(n))
	}).WithTimeout(2 * time.Minute).WithPolling(200 * time.Millisecond).Should(Succeed())
	t.Logf("2 managers: %d claims created in %s, all served after %s", n, created.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))

	// Each claim holds exactly the IPAddress its status names; no address or claim twice.
	claims := &ipamv1.IPClaimList{}
	g.Expect(env.Client.List(context.Background(), claims, client.InNamespace(ns))).To(Succeed())
	addresses := &ipamv1.IPAddressList{}
	g.Expect(env.Client.List(context.Background(), addresses, client.InNamespace(ns))).To(Succeed())
	g.Expect(addresses.Items).To(HaveLen(n))
	byName := map[string]ipamv1.IPAddress{}
	seenAddr := map[ipamv1.IPAddressStr]string{}
	seenClaim := map[string]string{}
	for _, a := range addresses.Items {
		byName[a.Name] = a
		g.Expect(seenAddr).NotTo(HaveKey(a.Spec.Address), "address given twice")
		seenAddr[a.Spec.Address] = a.Spec.Claim.Name
		g.Expect(seenClaim).NotTo(HaveKey(a.Spec.Claim.Name), "claim holds two addresses")
		seenClaim[a.Spec.Claim.Name] = a.Name
	}
	for _, c := range claims.Items {
		a, ok := byName[c.Status.Address.Name]
		g.Expect(ok).To(BeTrue(), "claim %s names a missing IPAddress", c.Name)
		g.Expect(a.Spec.Claim.Name).To(Equal(c.Name))
	}
}

// Claims deleted right after they are created, while being served, leak no address.
func TestDeleteRightAfterCreateLeaksNothing(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns)
	startManager(t, ns)
	create(t, newPool(ns, "storm", func(p *ipamv1.IPPool) {
		p.Spec.Pools = []ipamv1.Pool{{Subnet: ptrSubnet("192.168.0.0/22")}}
	}))
	createClaims(t, ns, "storm", "gone", 300, true)
	g.Eventually(func(g Gomega) {
		claims := &ipamv1.IPClaimList{}
		g.Expect(env.Client.List(context.Background(), claims, client.InNamespace(ns))).To(Succeed())
		g.Expect(claims.Items).To(BeEmpty())
		g.Expect(addressesOf(t, ns, "storm")).To(BeEmpty())
	}).WithTimeout(time.Minute).WithPolling(200 * time.Millisecond).Should(Succeed())
	// And nothing stays from a write still in flight: a manager whose cache still showed a claim
	// may create its IPAddress after the claim is gone, and then drops it when the claim's status
	// write finds no claim (reportAllocated); on a loaded machine the address can be seen for
	// that moment. Once those writes have landed, the pool holds nothing, for good.
	time.Sleep(2 * time.Second)
	g.Eventually(func() map[string]string { return addressesOf(t, ns, "storm") }).WithTimeout(10 * time.Second).Should(BeEmpty())
	g.Consistently(func() map[string]string { return addressesOf(t, ns, "storm") }).WithTimeout(2 * time.Second).Should(BeEmpty())
}

func ptrSubnet(s string) *ipamv1.IPSubnetStr {
	v := ipamv1.IPSubnetStr(s)
	return &v
}
