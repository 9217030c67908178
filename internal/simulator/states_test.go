package simulator

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
)

func TestNextState(t *testing.T) {
	d := Delays{Registering: time.Second, Inspecting: 2 * time.Second, Provisioning: 3 * time.Second, Deprovisioning: 4 * time.Second}
	wanted := facts{hasImage: true, online: true, consumed: true, gateOpen: true}
	with := func(state bmov1.ProvisioningState, in time.Duration, f facts) facts {
		f.state, f.inState = state, in
		return f
	}
	tests := []struct {
		name  string
		given facts
		want  step
	}{
		{"a new host registers at once", with(bmov1.StateNone, 0, facts{}), step{to: bmov1.StateRegistering}},
		{"registering takes its delay", with(bmov1.StateRegistering, 400*time.Millisecond, facts{gateOpen: true}), step{after: 600 * time.Millisecond, why: "in progress"}},
		{"registered hosts are inspected", with(bmov1.StateRegistering, time.Second, facts{gateOpen: true}), step{to: bmov1.StateInspecting}},
		{"the pre-provisioning gate holds inspection however long it takes", with(bmov1.StateRegistering, time.Hour, facts{}), step{why: "waiting for the pre-provisioning network data Secret"}},
		{"inspected hosts become available", with(bmov1.StateInspecting, 2*time.Second, facts{}), step{to: bmov1.StateAvailable}},
		{"available without an image stays", with(bmov1.StateAvailable, time.Hour, facts{online: true, consumed: true}), step{why: "waiting for spec.image, spec.online and spec.consumerRef"}},
		{"available and offline stays", with(bmov1.StateAvailable, 0, facts{hasImage: true, consumed: true}), step{why: "waiting for spec.image, spec.online and spec.consumerRef"}},
		{"available without a consumer stays", with(bmov1.StateAvailable, 0, facts{hasImage: true, online: true}), step{why: "waiting for spec.image, spec.online and spec.consumerRef"}},
		{"image, online and consumer provision", with(bmov1.StateAvailable, 0, wanted), step{to: bmov1.StateProvisioning}},
		{"provisioning takes its delay", with(bmov1.StateProvisioning, time.Second, wanted), step{after: 2 * time.Second, why: "in progress"}},
		{"provisioning ends provisioned", with(bmov1.StateProvisioning, 3*time.Second, wanted), step{to: bmov1.StateProvisioned}},
		{"image cleared while provisioning deprovisions", with(bmov1.StateProvisioning, 0, facts{online: true, consumed: true}), step{to: bmov1.StateDeprovisioning}},
		{"provisioned stays while the image is set", with(bmov1.StateProvisioned, time.Hour, wanted), step{why: "provisioned"}},
		{"powering off does not deprovision", with(bmov1.StateProvisioned, 0, facts{hasImage: true, consumed: true}), step{why: "provisioned"}},
		{"image cleared deprovisions", with(bmov1.StateProvisioned, 0, facts{online: true, consumed: true}), step{to: bmov1.StateDeprovisioning}},
		{"deprovisioning ends available", with(bmov1.StateDeprovisioning, 4*time.Second, facts{}), step{to: bmov1.StateAvailable}},
		{"states BMO has and we do not model are left alone", with(bmov1.StateExternallyProvisioned, time.Hour, wanted), step{why: "the simulator does not model state externally provisioned"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(next(tt.given, d)).To(Equal(tt.want))
		})
	}
}

func TestHardwareIsStableAndBelievable(t *testing.T) {
	g := NewWithT(t)
	g.Expect(hardware("host-3", "")).To(Equal(hardware("host-3", "")), "the same host always has the same hardware")
	g.Expect(MAC("host-3", "eno1")).NotTo(Equal(MAC("host-4", "eno1")))
	g.Expect(MAC("host-3", "eno1")).To(MatchRegexp(`^3c:fd:fe(:[0-9a-f]{2}){3}$`))

	seen := map[string]bool{}
	counts := map[int]bool{}
	for i := range 50 {
		name := "host-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		nics := hardware(name, "")["nics"].([]any)
		counts[len(nics)] = true
		for _, n := range nics {
			mac := n.(map[string]any)["mac"].(string)
			g.Expect(seen).NotTo(HaveKey(mac), "MACs are unique")
			seen[mac] = true
		}
	}
	g.Expect(counts).To(Equal(map[int]bool{2: true, 3: true, 4: true}), "hosts have 2 to 4 NICs")

	// A host registered with its own boot MAC keeps it on the PXE NIC.
	nics := hardware("host-0", "AA:BB:CC:00:11:22")["nics"].([]any)
	g.Expect(nics[0]).To(HaveKeyWithValue("mac", "aa:bb:cc:00:11:22"))
	g.Expect(nics[0]).To(HaveKeyWithValue("pxe", true))
	g.Expect(nics[1]).To(HaveKeyWithValue("pxe", false))
}
