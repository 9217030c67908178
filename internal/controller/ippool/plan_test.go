package ippool

import (
	"context"
	"fmt"
	"net/netip"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/pkg/ipam"
)

// A pass over a pool whose claims are all served plans no work and allocates nothing for each
// claim: every reconcile of a pool plans over all its claims, and a string or a copy per claim per
// pass came to gigabytes over a 10,000-machine run.
func TestPlanningServedClaimsAllocatesNothingPerClaim(t *testing.T) {
	g := NewWithT(t)
	const n = 2000
	pool := &ipamv1.IPPool{
		ObjectMeta: metav1.ObjectMeta{Name: "prov", Namespace: "ns"},
		Spec: ipamv1.IPPoolSpec{NamePrefix: "prov", Prefix: 16, Pools: []ipamv1.Pool{{
			Start: ptr.To(ipamv1.IPAddressStr("10.0.0.1")), End: ptr.To(ipamv1.IPAddressStr("10.0.255.254")),
		}}},
	}
	parsed, err := ipam.Parse(specOf(pool))
	g.Expect(err).NotTo(HaveOccurred())
	var existing []ipam.Allocation
	var claims []claim
	for i := range n {
		addr := netip.AddrFrom4([4]byte{10, 0, byte(1 + i/250), byte(1 + i%250)})
		name := fmt.Sprintf("machine-%d", i)
		existing = append(existing, ipam.Allocation{Owner: name, Addr: addr})
		c := &ipamv1.IPClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
		ipClaim{c}.setAllocated(ipamv1.IPAddressName("prov", addr.String()), metav1.Now().Time)
		claims = append(claims, ipClaim{c})
	}
	idx, err := ipam.Rebuild(parsed, existing, nil)
	g.Expect(err).NotTo(HaveOccurred())
	b := &batch{r: &Reconciler{}, pool: pool, st: &poolState{index: idx, suspects: map[string]types.UID{}}}

	allocs := testing.AllocsPerRun(5, func() {
		b.jobs = nil
		b.plan(context.Background(), claims)
	})
	g.Expect(b.jobs).To(BeEmpty(), "served claims need no work")
	g.Expect(allocs).To(BeNumerically("<", 10), "allocations of a pass over %d served claims", n)

	// One claim whose status names another address is planned to be settled.
	claims[7].(ipClaim).Status.Address = &corev1.ObjectReference{Name: "prov-10-0-9-9"}
	b.jobs = nil
	b.plan(context.Background(), claims)
	g.Expect(b.jobs).To(HaveLen(1))
	g.Expect(b.jobs[0].settle).To(BeTrue())
	g.Expect(b.jobs[0].orig.object().GetName()).To(Equal("machine-7"))
}
