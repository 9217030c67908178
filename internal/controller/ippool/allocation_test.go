package ippool_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
)

// Claims get the lowest free address in the order of spec.pools, skipping exclusions, the
// gateway and pre-allocated addresses; a pre-allocated claim gets its own address.
func TestAllocationOrderExclusionsPreAllocations(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns)
	create(t, newPool(ns, "prov", func(p *ipamv1.IPPool) {
		p.Spec.Pools = []ipamv1.Pool{
			{Start: addr("192.168.0.1"), End: addr("192.168.0.5")}, // .1 is the gateway
			{Start: addr("192.168.1.10"), End: addr("192.168.1.11"), Prefix: 25, Gateway: addr("192.168.1.1")},
		}
		p.Spec.ExcludedAddresses = []string{"192.168.0.3"}
		p.Spec.PreAllocations = map[string]ipamv1.IPAddressStr{"host-0-prov": "192.168.0.4"}
	}))

	var got []string
	for _, name := range []string{"a", "b", "c", "d"} {
		create(t, newClaim(ns, name, "prov", nil))
		got = append(got, claimAddress(t, ns, name))
	}
	g.Expect(got).To(Equal([]string{"192.168.0.2", "192.168.0.5", "192.168.1.10", "192.168.1.11"}))

	create(t, newClaim(ns, "host-0-prov", "prov", nil))
	g.Expect(claimAddress(t, ns, "host-0-prov")).To(Equal("192.168.0.4"))

	// The IPAddress carries what its entry gives, is named after the address, and is owned by
	// the claim.
	a := &ipamv1.IPAddress{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "prov-192-168-1-10"}, a)).To(Succeed())
	g.Expect(a.Spec.Prefix).To(Equal(25))
	g.Expect(a.Spec.Gateway).To(Equal(addr("192.168.1.1")))
	g.Expect(a.Spec.DNSServers).To(Equal([]ipamv1.IPAddressStr{"8.8.8.8"}))
	g.Expect(a.Spec.Claim.Name).To(Equal("c"))
	g.Expect(a.OwnerReferences).To(ContainElement(HaveField("Name", "c")))
	g.Expect(a.OwnerReferences).To(ContainElement(HaveField("Name", "prov")))

	// Five addresses held of six; the pool says so and lists who holds what.
	g.Eventually(func(g Gomega) {
		p := poolReady(t, ns, "prov", ipamv1.PoolFullReason)
		g.Expect(p.Status.Total).To(Equal(ptr.To(int64(5))))
		g.Expect(p.Status.Used).To(Equal(ptr.To(int64(5))))
		g.Expect(p.Status.Free).To(Equal(ptr.To(int64(0))))
		g.Expect(p.Status.Allocations).To(HaveKeyWithValue("host-0-prov", ipamv1.IPAddressStr("192.168.0.4")))
		g.Expect(p.Status.Allocations).To(HaveLen(5))
	}).Should(Succeed())
}

// The ipAddress annotation asks for one address; an address that is taken, outside the pool or
// malformed is refused with a reason and a message naming it.
func TestRequestedAddresses(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns)
	create(t, newPool(ns, "pool", nil))

	create(t, newClaim(ns, "wants-15", "pool", map[string]string{ipamv1.IPAddressAnnotation: "192.168.0.15"}))
	g.Expect(claimAddress(t, ns, "wants-15")).To(Equal("192.168.0.15"))

	create(t, newClaim(ns, "wants-15-too", "pool", map[string]string{ipamv1.IPAddressAnnotation: "192.168.0.15"}))
	cond, c := claimReady(t, ns, "wants-15-too", ipamv1.RequestedAddressUnavailableReason)
	g.Expect(cond.Message).To(ContainSubstring(`192.168.0.15 is allocated to "wants-15"`))
	g.Expect(*c.Status.ErrorMessage).To(HavePrefix("Requested IP not available"))

	create(t, newClaim(ns, "outside", "pool", map[string]string{ipamv1.IPAddressAnnotation: "10.0.0.1"}))
	cond, _ = claimReady(t, ns, "outside", ipamv1.RequestedAddressUnavailableReason)
	g.Expect(cond.Message).To(ContainSubstring("10.0.0.1 is outside every range of spec.pools"))

	create(t, newClaim(ns, "malformed", "pool", map[string]string{ipamv1.IPAddressAnnotation: "192.168.0.300"}))
	cond, _ = claimReady(t, ns, "malformed", ipamv1.RequestedAddressInvalidReason)
	g.Expect(cond.Message).To(ContainSubstring(`"192.168.0.300" is not an IP address`))

	// The next plain claim still gets the lowest free address.
	create(t, newClaim(ns, "plain", "pool", nil))
	g.Expect(claimAddress(t, ns, "plain")).To(Equal("192.168.0.10"))
}

func TestIPv6(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns)
	create(t, newPool(ns, "v6", func(p *ipamv1.IPPool) {
		p.Spec.Prefix = 0
		p.Spec.Gateway = nil
		p.Spec.DNSServers = nil
		p.Spec.Pools = []ipamv1.Pool{{Start: addr("fd00::10"), End: addr("fd00::1f"), Prefix: 64, Gateway: addr("fd00::1")}}
	}))
	create(t, newClaim(ns, "a", "v6", nil), newClaim(ns, "b", "v6", map[string]string{ipamv1.IPAddressAnnotation: "FD00::0:1F"}))
	g.Expect(claimAddress(t, ns, "a")).To(Equal("fd00::10"))
	g.Expect(claimAddress(t, ns, "b")).To(Equal("fd00::1f"))
	a := &ipamv1.IPAddress{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "v6-fd00--10"}, a)).To(Succeed())
	g.Expect(a.Spec.Prefix).To(Equal(64))
	g.Expect(a.Spec.Gateway).To(Equal(addr("fd00::1")))
}
