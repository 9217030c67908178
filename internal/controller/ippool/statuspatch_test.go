package ippool

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/pkg/ipam"
)

// TestStatusPatchTurnsTheStoredStatusIntoTheNewOne: applied to the status as stored, the patch
// writePool sends gives the status the reconcile made, as client.MergeFrom's patch of the whole
// status would; and it names only the allocations that changed, not every one the pool holds.
func TestStatusPatchTurnsTheStoredStatusIntoTheNewOne(t *testing.T) {
	g := NewWithT(t)
	allocations := func(from, to int) map[string]ipamv1.IPAddressStr {
		m := map[string]ipamv1.IPAddressStr{}
		for i := from; i < to; i++ {
			m[fmt.Sprintf("claim-%d", i)] = ipamv1.IPAddressStr(fmt.Sprintf("10.0.%d.%d", i/250, i%250+1))
		}
		return m
	}
	now := metav1.NewTime(time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC))
	ready := func(msg string) []metav1.Condition {
		return []metav1.Condition{{Type: ipamv1.ReadyCondition, Status: metav1.ConditionTrue, Reason: ipamv1.PoolAvailableReason, Message: msg, LastTransitionTime: now}}
	}
	moved := allocations(0, 1000)
	moved["claim-5"] = "10.9.9.9"
	cases := map[string]struct{ before, after ipamv1.IPPoolStatus }{
		"a batch served":          {ipamv1.IPPoolStatus{Allocations: allocations(0, 1000), Used: ptr.To[int64](1000), Conditions: ready("a")}, ipamv1.IPPoolStatus{Allocations: allocations(0, 1040), Used: ptr.To[int64](1040), Conditions: ready("b"), LastUpdated: &now}},
		"some released":           {ipamv1.IPPoolStatus{Allocations: allocations(0, 1000)}, ipamv1.IPPoolStatus{Allocations: allocations(10, 1000)}},
		"an address changed":      {ipamv1.IPPoolStatus{Allocations: allocations(0, 1000)}, ipamv1.IPPoolStatus{Allocations: moved}},
		"the first":               {ipamv1.IPPoolStatus{}, ipamv1.IPPoolStatus{Allocations: allocations(0, 1), Free: ptr.To[int64](9)}},
		"the last released":       {ipamv1.IPPoolStatus{Allocations: allocations(0, 3), Total: ptr.To[int64](9)}, ipamv1.IPPoolStatus{Total: ptr.To[int64](10)}},
		"only counters":           {ipamv1.IPPoolStatus{Allocations: allocations(0, 5), Free: ptr.To[int64](4)}, ipamv1.IPPoolStatus{Allocations: allocations(0, 5), Free: ptr.To[int64](3), OutOfRange: ptr.To[int64](1)}},
		"conditions dropped":      {ipamv1.IPPoolStatus{Conditions: ready("x")}, ipamv1.IPPoolStatus{}},
		"an empty map, then none": {ipamv1.IPPoolStatus{Allocations: map[string]ipamv1.IPAddressStr{}}, ipamv1.IPPoolStatus{Used: ptr.To[int64](0)}},
	}
	for name, c := range cases {
		data, err := statusPatch(&c.before, &c.after)
		g.Expect(err).NotTo(HaveOccurred(), name)
		stored, err := json.Marshal(map[string]any{"status": c.before})
		g.Expect(err).NotTo(HaveOccurred())
		got, err := jsonpatch.MergePatch(stored, data)
		g.Expect(err).NotTo(HaveOccurred(), name)
		want, err := json.Marshal(map[string]any{"status": c.after})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(MatchJSON(want), name+": the patch applied gives the new status")
	}

	batch := cases["a batch served"]
	data, err := statusPatch(&batch.before, &batch.after)
	g.Expect(err).NotTo(HaveOccurred())
	var sent struct {
		Status struct {
			Indexes map[string]any `json:"indexes"`
		} `json:"status"`
	}
	g.Expect(json.Unmarshal(data, &sent)).To(Succeed())
	g.Expect(sent.Status.Indexes).To(HaveLen(40), "the 40 new allocations, not the pool's 1,040")
}

// TestCopyPoolSharesOnlyTheAllocations: the copy a reconcile changes shares the allocations map
// (which no reconcile changes in place) and nothing else it may change.
func TestCopyPoolSharesOnlyTheAllocations(t *testing.T) {
	g := NewWithT(t)
	cached := &ipamv1.IPPool{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{"a": "1"}, Finalizers: []string{"f"}},
		Status:     ipamv1.IPPoolStatus{Allocations: map[string]ipamv1.IPAddressStr{"c": "10.0.0.1"}, Used: ptr.To[int64](1), Conditions: []metav1.Condition{{Type: "Ready"}}},
	}
	c := copyPool(cached)
	c.Annotations["a"] = "2"
	c.Finalizers[0] = "g"
	c.Status.Conditions[0].Reason = "Changed"
	*c.Status.Used = 2
	g.Expect(cached.Annotations["a"]).To(Equal("1"))
	g.Expect(cached.Finalizers[0]).To(Equal("f"))
	g.Expect(cached.Status.Conditions[0].Reason).To(BeEmpty())
	g.Expect(*cached.Status.Used).To(Equal(int64(1)))
	g.Expect(c.Status.Allocations).To(HaveKeyWithValue("c", ipamv1.IPAddressStr("10.0.0.1")))
}

// TestSameAllocationsComparesAddressesAsTheStatusWritesThem: an allocation listed with another
// address, another owner, a missing or an extra entry, or an IPv6 address in a text other than the
// canonical one the status is written with, is a change.
func TestSameAllocationsComparesAddressesAsTheStatusWritesThem(t *testing.T) {
	g := NewWithT(t)
	allocs := []ipam.Allocation{{Owner: "a", Addr: netip.MustParseAddr("10.0.0.1")}, {Owner: "b", Addr: netip.MustParseAddr("2001:db8::1")}}
	parsed, err := ipam.Parse(specOf(&ipamv1.IPPool{Spec: ipamv1.IPPoolSpec{Prefix: 24,
		Pools: []ipamv1.Pool{{Start: ptr.To(ipamv1.IPAddressStr("10.0.0.1")), End: ptr.To(ipamv1.IPAddressStr("10.0.0.9"))}}}}))
	g.Expect(err).NotTo(HaveOccurred())
	idx, err := ipam.Rebuild(parsed, allocs, nil) // the IPv6 one held outside the pool
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sameAllocations(idx, map[string]ipamv1.IPAddressStr{"a": "10.0.0.1", "b": "2001:db8::1"})).To(BeTrue())
	for name, status := range map[string]map[string]ipamv1.IPAddressStr{
		"another address":     {"a": "10.0.0.2", "b": "2001:db8::1"},
		"another owner":       {"a": "10.0.0.1", "c": "2001:db8::1"},
		"one missing":         {"a": "10.0.0.1"},
		"one more":            {"a": "10.0.0.1", "b": "2001:db8::1", "c": "10.0.0.3"},
		"IPv6 not canonical":  {"a": "10.0.0.1", "b": "2001:DB8:0::1"},
		"not an address":      {"a": "ten", "b": "2001:db8::1"},
		"IPv4 mapped in IPv6": {"a": "::ffff:10.0.0.1", "b": "2001:db8::1"},
	} {
		g.Expect(sameAllocations(idx, status)).To(BeFalse(), name)
	}
}
