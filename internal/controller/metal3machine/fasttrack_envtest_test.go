package metal3machine

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// A Metal3Machine deleted under a manager started with fast track (--fast-track,
// CAPM3_FAST_TRACK=true) leaves its host powered on, spec.online true, while BMO deprovisions it
// and once it is released, so that its deploy ramdisk keeps running and the next machine
// provisions it without a reboot. Upstream's table: fast track keeps the host on unless its
// automatedCleaningMode is disabled (nothing would run on it); without fast track the host is
// powered off; a host with disablePowerOff is never powered off.
func TestFastTrackDeprovisioning(t *testing.T) {
	tests := []struct {
		name            string
		fastTrack       bool
		cleaning        infrav1.AutomatedCleaningMode
		disablePowerOff bool
		wantOnline      bool
	}{
		{name: "fast track keeps a cleaned host on", fastTrack: true, cleaning: infrav1.CleaningModeMetadata, wantOnline: true},
		{name: "fast track with cleaning disabled powers the host off", fastTrack: true, cleaning: infrav1.CleaningModeDisabled, wantOnline: false},
		{name: "without fast track the host is powered off", fastTrack: false, cleaning: infrav1.CleaningModeMetadata, wantOnline: false},
		{name: "disablePowerOff wins over cleaning disabled", fastTrack: true, cleaning: infrav1.CleaningModeDisabled, disablePowerOff: true, wantOnline: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			ctx := context.Background()
			ns := newNamespace(t)
			cluster := createCluster(t, ns, "c1", clusterOpts{cloudProviderEnabled: ptr.To(true)})
			host := createHost(t, ns, "h1", nil, bmov1.StateAvailable)
			if tt.disablePowerOff {
				g.Expect(env.Client.Patch(ctx, host, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"disablePowerOff":true}}`)))).To(Succeed())
			}
			opts := machineOpts{bootstrap: "b", cleaning: ptr.To(tt.cleaning)}
			if tt.fastTrack {
				opts.labels = map[string]string{fastTrackLabel: "on"}
			}
			m3m := createMachine(t, cluster, "m1", opts)

			g.Eventually(func(g Gomega) {
				h := getHost(g, ns, "h1")
				g.Expect(h.Spec.Image).NotTo(BeNil())
				g.Expect(h.Spec.Online).To(BeTrue(), "a provisioned host is on")
				g.Expect(h.Spec.AutomatedCleaningMode).To(Equal(string(tt.cleaning)))
			}, eventually, poll).Should(Succeed())
			setHostState(t, ns, "h1", bmov1.StateProvisioned)
			g.Eventually(func(g Gomega) {
				g.Expect(getM3M(g, m3m).Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
			}, eventually, poll).Should(Succeed())

			g.Expect(env.Client.Delete(ctx, m3m)).To(Succeed())
			g.Eventually(func(g Gomega) {
				h := getHost(g, ns, "h1")
				g.Expect(h.Spec.Image).To(BeNil(), "deprovisioning")
				g.Expect(h.Spec.ConsumerRef).NotTo(BeNil(), "still claimed while BMO deprovisions")
				g.Expect(h.Spec.Online).To(Equal(tt.wantOnline))
			}, eventually, poll).Should(Succeed())

			setHostState(t, ns, "h1", bmov1.StateAvailable)
			g.Eventually(func(g Gomega) {
				err := env.Client.Get(ctx, client.ObjectKeyFromObject(m3m), &infrav1.Metal3Machine{})
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
			}, eventually, poll).Should(Succeed(), "the machine goes once its host is released")
			h := getHost(g, ns, "h1")
			g.Expect(h.Spec.ConsumerRef).To(BeNil(), "released")
			g.Expect(h.Spec.Online).To(Equal(tt.wantOnline))
			g.Expect(h.Spec.AutomatedCleaningMode).To(Equal(string(tt.cleaning)))
			expectBMOFieldsKept(g, getHostUnstructured(g, ns, "h1"))
		})
	}
}
