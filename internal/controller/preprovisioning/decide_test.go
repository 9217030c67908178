package preprovisioning

import (
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/poolanswer"
	"github.com/metalwire/metalwire/pkg/render"
)

func host(annotations map[string]string, name string) *bmov1.BareMetalHost {
	return &bmov1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Name: "host-0", Namespace: "metal3", Annotations: annotations},
		Spec:       bmov1.BareMetalHostSpec{PreprovisioningNetworkDataName: name},
	}
}

func TestHostUpdate(t *testing.T) {
	const secret = "host-0-preprov-networkdata"
	ours := map[string]string{bmov1.PausedAnnotation: infrav1.PreprovisioningPausedAnnotationValue, "keep": "me"}
	tests := []struct {
		name             string
		given            *bmov1.BareMetalHost
		wantAnnotations  map[string]string
		wantLock, change bool
		wantErr          bool
	}{
		{name: "our pause: set the name and lift it in one locked patch", given: host(ours, ""),
			wantAnnotations: map[string]string{"keep": "me"}, wantLock: true, change: true},
		{name: "our pause, name already set: lift it", given: host(ours, secret),
			wantAnnotations: map[string]string{"keep": "me"}, wantLock: true, change: true},
		{name: "another tool's pause stays", given: host(map[string]string{bmov1.PausedAnnotation: "metal3.io/capm3"}, ""),
			wantAnnotations: map[string]string{bmov1.PausedAnnotation: "metal3.io/capm3"}, change: true},
		{name: "a pause with no value is not ours", given: host(map[string]string{bmov1.PausedAnnotation: ""}, ""),
			wantAnnotations: map[string]string{bmov1.PausedAnnotation: ""}, change: true},
		{name: "our value with different case is not ours", given: host(map[string]string{bmov1.PausedAnnotation: "Metal3.io/preprovisioning"}, ""),
			wantAnnotations: map[string]string{bmov1.PausedAnnotation: "Metal3.io/preprovisioning"}, change: true},
		{name: "no pause (the proposal's BMO): only the name", given: host(nil, ""), change: true},
		{name: "nothing left to do", given: host(nil, secret)},
		{name: "the user's own Secret is never replaced", given: host(ours, "static-network"), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			before := tt.given.DeepCopy()
			want, lock, changed, err := hostUpdate(tt.given, secret)
			g.Expect(tt.given).To(Equal(before), "the host read must not change: it is the patch's base")
			if tt.wantErr {
				g.Expect(err).To(MatchError(errNameInUse))
				g.Expect(err.Error()).To(ContainSubstring("already names Secret static-network; remove it"))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(want.Spec.PreprovisioningNetworkDataName).To(Equal(secret))
			if tt.wantAnnotations == nil {
				g.Expect(want.Annotations).To(BeEmpty())
			} else {
				g.Expect(want.Annotations).To(Equal(tt.wantAnnotations))
			}
			g.Expect(lock).To(Equal(tt.wantLock))
			g.Expect(changed).To(Equal(tt.change))
		})
	}
}

func TestHostNeedsUs(t *testing.T) {
	tests := []struct {
		name  string
		given *bmov1.BareMetalHost
		want  bool
	}{
		{name: "annotated", given: host(map[string]string{refAnnotation: "x"}, ""), want: true},
		{name: "annotation removed, still names our Secret", given: host(nil, "host-0-preprov-networkdata"), want: true},
		{name: "held with our pause", given: host(map[string]string{bmov1.PausedAnnotation: infrav1.PreprovisioningPausedAnnotationValue}, ""), want: true},
		{name: "someone else's Secret and pause", given: host(map[string]string{bmov1.PausedAnnotation: "x"}, "static"), want: false},
		{name: "a plain host", given: host(nil, ""), want: false},
		{name: "not a host", given: nil, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(hostNeedsUs(tt.given)).To(Equal(tt.want))
		})
	}
}

func TestPastPreprovisioning(t *testing.T) {
	tests := []struct {
		given bmov1.ProvisioningState
		want  bool
	}{
		{bmov1.StateNone, false}, {bmov1.StateRegistering, false}, {bmov1.StateInspecting, false},
		{bmov1.StateMatchProfile, false}, {bmov1.StatePreparing, false},
		{bmov1.StateAvailable, true}, {bmov1.StateReady, true}, {bmov1.StateProvisioning, true},
		{bmov1.StateProvisioned, true}, {bmov1.StateExternallyProvisioned, true}, {bmov1.StateDeprovisioning, true},
	}
	for _, tt := range tests {
		t.Run(string(tt.given), func(t *testing.T) {
			NewWithT(t).Expect(pastPreprovisioning(tt.given)).To(Equal(tt.want))
		})
	}
}

func TestKeepsAddress(t *testing.T) {
	g := NewWithT(t)
	g.Expect(keepsAddress(ptr.To("cluster"))).To(BeTrue(), "a cluster's pool is the common pool")
	g.Expect(keepsAddress(nil)).To(BeFalse(), "a pool of no cluster is a pre-provisioning pool")
	g.Expect(keepsAddress(ptr.To(""))).To(BeFalse())
}

func TestIsLiveISO(t *testing.T) {
	g := NewWithT(t)
	h := host(nil, "")
	g.Expect(isLiveISO(h)).To(BeFalse())
	h.Spec.Image = &bmov1.Image{URL: "http://x/y.iso", DiskFormat: ptr.To("live-iso")}
	g.Expect(isLiveISO(h)).To(BeTrue())
	h.Spec.Image.DiskFormat = ptr.To("qcow2")
	g.Expect(isLiveISO(h)).To(BeFalse())
}

func TestRenderFailure(t *testing.T) {
	tests := []struct {
		name        string
		given       error
		wantReason  string
		wantMessage []string
	}{
		{name: "a NIC name on a host not inspected names the field and the way out",
			given:      &render.Error{Field: "preprovisioningNetworkData.links.ethernets[0].macAddress.fromHostInterface", Reason: render.ReasonHostNotInspected, Detail: "x"},
			wantReason: infrav1.PreprovisioningRenderFailedReason,
			wantMessage: []string{"preprovisioningNetworkData.links.ethernets[0].macAddress.fromHostInterface: needs host node-1's inspected NICs",
				"inspection waits for this data", "fromBootMAC: true"}},
		{name: "a pool not answered yet is waiting",
			given:      &render.Error{Field: "f", Reason: render.ReasonWaitingForPool, Detail: "waiting for an address from pool p"},
			wantReason: infrav1.PreprovisioningWaitingForIPAddressesReason, wantMessage: []string{"f: waiting for an address from pool p"}},
		{name: "an invalid template is a render failure, as the renderer says it",
			given:      &render.Error{Field: "preprovisioningNetworkData.links.vlans[0].vlanLink", Reason: render.ReasonInvalid, Detail: `"bond1" is not a link`},
			wantReason: infrav1.PreprovisioningRenderFailedReason, wantMessage: []string{`preprovisioningNetworkData.links.vlans[0].vlanLink: "bond1" is not a link`}},
		{name: "anything else", given: errors.New("boom"), wantReason: infrav1.PreprovisioningRenderFailedReason, wantMessage: []string{"boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			reason, message := renderFailure("node-1", tt.given)
			g.Expect(reason).To(Equal(tt.wantReason))
			for _, m := range tt.wantMessage {
				g.Expect(message).To(ContainSubstring(m))
			}
		})
	}
}

func TestAddressesOutcome(t *testing.T) {
	p1, p2 := render.NewPoolRef("", "", "p1"), render.NewPoolRef("", "", "p2")
	tests := []struct {
		name        string
		given       []poolanswer.Answer
		wantReason  string
		wantMessage string
	}{
		{name: "every address known", given: []poolanswer.Answer{{Pool: p1, State: poolanswer.Ready}, {Pool: p2, State: poolanswer.Ready}}},
		{name: "no pools", given: nil},
		{name: "one waiting", given: []poolanswer.Answer{{Pool: p1, State: poolanswer.Ready}, {Pool: p2, State: poolanswer.Waiting, Message: "IPClaim h-p2 created"}},
			wantReason: infrav1.PreprovisioningWaitingForIPAddressesReason, wantMessage: "waiting for addresses: IPClaim h-p2 created"},
		{name: "exhausted wins over waiting", given: []poolanswer.Answer{{Pool: p1, State: poolanswer.Waiting, Message: "a"}, {Pool: p2, State: poolanswer.Exhausted, Message: "IPClaim h-p2: pool p2 is full"}},
			wantReason: infrav1.PreprovisioningPoolExhaustedReason, wantMessage: "no free address: IPClaim h-p2: pool p2 is full; add addresses to the pool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got := addressesOutcome(tt.given)
			if tt.wantReason == "" {
				g.Expect(got).To(BeNil())
				return
			}
			g.Expect(got.Reason).To(Equal(tt.wantReason))
			g.Expect(got.Message).To(ContainSubstring(tt.wantMessage))
		})
	}
}

func TestUnsupportedPools(t *testing.T) {
	g := NewWithT(t)
	g.Expect(unsupportedPools([]render.PoolRef{render.NewPoolRef("", "", "a")})).To(BeEmpty())
	g.Expect(unsupportedPools([]render.PoolRef{
		render.NewPoolRef("", "", "a"),
		render.NewPoolRef("ipam.cluster.x-k8s.io", "InClusterIPPool", "b"),
	})).To(Equal([]string{"InClusterIPPool.ipam.cluster.x-k8s.io/b"}))
}
