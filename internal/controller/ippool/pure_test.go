package ippool

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/pkg/ipam"
)

func TestSpecErrorMessageNamesSpecFields(t *testing.T) {
	for _, tc := range []struct {
		name  string
		given error
		want  string
	}{
		{"one field", &ipam.FieldError{Field: "pools[0].end", Detail: "10.0.0.1 is before start 10.0.0.9; swap start and end"},
			"spec.pools[0].end: 10.0.0.1 is before start 10.0.0.9; swap start and end"},
		{"every field", ipam.FieldErrors{{Field: "prefix", Detail: "bad"}, {Field: "gateway", Detail: "worse"}},
			"spec.prefix: bad; spec.gateway: worse"},
		{"not a field error", errors.New("boom"), "boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(specErrorMessage(tc.given)).To(Equal(tc.want))
		})
	}
}

func TestUpstreamMessages(t *testing.T) {
	for _, tc := range []struct {
		reason, want string
	}{
		{ipamv1.PoolExhaustedReason, "Exhausted IP Pools: why"},
		{ipamv1.RequestedAddressUnavailableReason, "Requested IP not available: why"},
		{ipamv1.RequestedAddressInvalidReason, "Requested IP not available: why"},
		{ipamv1.PoolNotFoundReason, "why"},
	} {
		NewWithT(t).Expect(upstreamMessage(tc.reason, "why")).To(Equal(tc.want), tc.reason)
	}
}

func TestPausedCAPIClaim(t *testing.T) {
	paused := &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{Paused: ptr.To(true)}}
	annotated := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{clusterv1.PausedAnnotation: ""}}}
	running := &clusterv1.Cluster{}
	withCluster := func(name string, annotations map[string]string) *capiipamv1.IPAddressClaim {
		return &capiipamv1.IPAddressClaim{
			ObjectMeta: metav1.ObjectMeta{Annotations: annotations},
			Spec:       capiipamv1.IPAddressClaimSpec{ClusterName: name},
		}
	}
	for _, tc := range []struct {
		name    string
		claim   *capiipamv1.IPAddressClaim
		cluster *clusterv1.Cluster
		found   bool
		want    bool
	}{
		{"no cluster named", withCluster("", nil), nil, false, false},
		{"claim paused", withCluster("", map[string]string{clusterv1.PausedAnnotation: ""}), nil, false, true},
		{"cluster missing", withCluster("c", nil), running, false, true},
		{"cluster running", withCluster("c", nil), running, true, false},
		{"cluster paused by spec", withCluster("c", nil), paused, true, true},
		{"cluster paused by annotation", withCluster("c", nil), annotated, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(pausedCAPIClaim(tc.claim, tc.cluster, tc.found)).To(Equal(tc.want))
		})
	}
}

// Releases written to the pool annotation make a fresh index (a restarted controller) keep the
// address cooling; expired ones are dropped from the annotation.
func TestReleasesSurviveARestart(t *testing.T) {
	g := NewWithT(t)
	pool, err := ipam.Parse(ipam.Spec{
		Pools:            []ipam.Range{{Start: "10.0.0.1", End: "10.0.0.2", Prefix: 24}},
		ReuseGracePeriod: time.Minute,
	})
	g.Expect(err).NotTo(HaveOccurred())
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	first := &poolState{index: ipam.NewIndex(pool, nil), releases: map[netip.Addr]release{}}
	a, err := first.index.Allocate("old", now)
	g.Expect(err).NotTo(HaveOccurred())
	first.index.Release(a, now)
	first.recordRelease("old", a, now)
	annotation := first.releasesAnnotation(now.Add(30 * time.Second))
	g.Expect(annotation).To(ContainSubstring(`"address":"10.0.0.1"`))

	restarted := &poolState{index: ipam.NewIndex(pool, nil), releases: map[netip.Addr]release{}}
	restarted.replayReleases(&ipamv1.IPPool{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{ipamv1.ReleasesAnnotation: annotation}}})
	b, err := restarted.index.Allocate("new", now.Add(30*time.Second))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(b.String()).To(Equal("10.0.0.2"), "10.0.0.1 is still cooling")

	g.Expect(restarted.releasesAnnotation(now.Add(2*time.Minute))).To(BeEmpty(), "expired releases are dropped")
}

// A large pool's status, which lists every allocation, is written less often while claims
// stream in, so that its cost stays proportional to the number of claims.
func TestStatusIntervalGrowsWithThePool(t *testing.T) {
	g := NewWithT(t)
	r := &Reconciler{}
	g.Expect(r.statusInterval(0)).To(Equal(time.Second))
	g.Expect(r.statusInterval(999)).To(Equal(time.Second))
	g.Expect(r.statusInterval(10000)).To(Equal(20 * time.Second))
	g.Expect(r.statusInterval(65000)).To(Equal(30 * time.Second))
	r.StatusInterval = 100 * time.Millisecond
	g.Expect(r.statusInterval(65000)).To(Equal(100*time.Millisecond), "a set interval is kept")
}
