package ippool

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/pkg/ipam"
)

func names(claims []claim) []string {
	out := make([]string, 0, len(claims))
	for _, c := range claims {
		out = append(out, c.object().GetName())
	}
	return out
}

// nth is the pool's i-th address from 10.0.0.1.
func nth(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{10, 0, byte((1 + i) / 256), byte((1 + i) % 256)})
}

// A pool's pass looks at the claims that changed since a pass found them needing nothing, not
// at every claim: with 2,000 claims served, the pass a new claim brings about looks at that
// claim, and once its status is seen served, at none. A claim the pass leaves waiting is looked
// at again by the next pass without an event of its own; so is a claim whose IPAddress changed.
func TestAPassLooksAtTheClaimsThatChanged(t *testing.T) {
	g := NewWithT(t)
	const n = 2000
	key := types.NamespacedName{Namespace: "ns", Name: "prov"}
	pool := &ipamv1.IPPool{
		ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace},
		Spec: ipamv1.IPPoolSpec{NamePrefix: "prov", Prefix: 16, Pools: []ipamv1.Pool{{
			// Room for the n claims and one more.
			Start: ptr.To(ipamv1.IPAddressStr("10.0.0.1")), End: ptr.To(ipamv1.IPAddressStr(nth(n).String())),
		}}},
	}
	parsed, err := ipam.Parse(specOf(pool))
	g.Expect(err).NotTo(HaveOccurred())
	var existing []ipam.Allocation
	r := &Reconciler{}
	pools := []types.NamespacedName{key}
	for i := range n {
		addr := nth(i)
		name := fmt.Sprintf("machine-%d", i)
		existing = append(existing, ipam.Allocation{Owner: name, Addr: addr})
		c := &ipamv1.IPClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
		ipClaim{c}.setAllocated(ipamv1.IPAddressName("prov", addr.String()), time.Now())
		r.members.set(ipClaim{c}, nil, pools)
	}
	idx, err := ipam.Rebuild(parsed, existing, nil)
	g.Expect(err).NotTo(HaveOccurred())
	st := &poolState{index: idx, suspects: map[string]types.UID{}}
	pass := func(full bool) []string {
		claims := r.members.take(key, full)
		b := &batch{r: r, pool: pool, st: st}
		b.plan(context.Background(), claims)
		r.members.again(key, b.again)
		return names(claims)
	}

	now := time.Now()
	g.Expect(st.fullPass(now)).To(BeTrue(), "a new state's first pass looks at every claim")
	g.Expect(st.fullPass(now.Add(time.Second))).To(BeFalse())
	g.Expect(pass(true)).To(HaveLen(n))
	g.Expect(pass(false)).To(BeEmpty(), "every claim was served: nothing to look at")

	// A new claim: the pass looks at it alone and hands it the one address left.
	fresh := &ipamv1.IPClaim{ObjectMeta: metav1.ObjectMeta{Name: "machine-new", Namespace: "ns", CreationTimestamp: metav1.Now()}}
	r.members.set(ipClaim{fresh}, nil, pools)
	g.Expect(pass(false)).To(ConsistOf("machine-new"))
	// Its status is not written yet (no run here): it is looked at again, event or not.
	g.Expect(pass(false)).To(ConsistOf("machine-new"))
	served := fresh.DeepCopy()
	held, ok := st.index.Lookup("machine-new")
	g.Expect(ok).To(BeTrue())
	ipClaim{served}.setAllocated(ipamv1.IPAddressName("prov", held.String()), time.Now())
	r.members.set(ipClaim{served}, nil, pools) // the status write's event
	g.Expect(pass(false)).To(ConsistOf("machine-new"))
	g.Expect(pass(false)).To(BeEmpty(), "served, it leaves the claims to look at")

	// The pool is full: a claim waits, and every pass tries it again.
	waiting := &ipamv1.IPClaim{ObjectMeta: metav1.ObjectMeta{Name: "machine-waiting", Namespace: "ns"}}
	r.members.set(ipClaim{waiting}, nil, pools)
	g.Expect(pass(false)).To(ConsistOf("machine-waiting"))
	_, ok = st.index.Lookup("machine-waiting")
	g.Expect(ok).To(BeFalse(), "the pool has no room left")
	g.Expect(pass(false)).To(ConsistOf("machine-waiting"))

	// An IPAddress event of a served claim (and of a claim the pool does not have) marks it.
	r.members.touch(key, "machine-7")
	r.members.touch(key, "nobody")
	g.Expect(pass(false)).To(ConsistOf("machine-7", "machine-waiting"))

	// A claim that left the pool is not looked at, even when it was waiting.
	r.members.remove(ipClaim{waiting}, pools)
	g.Expect(pass(false)).To(BeEmpty())

	// Suspects, a new spec, or the interval make the next pass look at every claim again.
	st.suspects["prov-10-0-0-9"] = ""
	pass(false)
	g.Expect(st.fullPass(now.Add(2*time.Second))).To(BeTrue(), "suspects were checked")
	g.Expect(st.fullPass(now.Add(3 * time.Second))).To(BeFalse())
	g.Expect(st.fullPass(now.Add(2*time.Second+fullPassInterval))).To(BeTrue(), "the interval passed")
}
