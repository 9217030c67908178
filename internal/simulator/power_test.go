package simulator_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	"github.com/metalwire/metalwire/internal/simulator"
)

// TestRebootAnnotationPowersTheHostOffAndOn: as BMO, a provisioned host is powered off while it
// carries a reboot.metal3.io/<requester> annotation (a Metal3Remediation's) and on again once
// it goes.
func TestRebootAnnotationPowersTheHostOffAndOn(t *testing.T) {
	g := NewWithT(t)
	r := startSimulator(t)
	ctx := context.Background()
	_, err := r.sim.CreateHosts(ctx, r.ns, 1, simulator.HostOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(r.state("host-0"), wait).Should(Equal(bmov1.StateAvailable))
	r.secret(g, "host-0-userdata", map[string]string{"value": "#cloud-config\n"})
	r.patchSpec(g, "host-0", func(h *bmov1.BareMetalHost) {
		provision(h)
		h.Spec.UserData = &corev1.SecretReference{Name: "host-0-userdata"}
	})
	g.Eventually(r.state("host-0"), wait).Should(Equal(bmov1.StateProvisioned))
	poweredOn := func() bool { return r.host(g, "host-0").Status.PoweredOn }
	g.Eventually(poweredOn, wait).Should(BeTrue())

	const key = "reboot.metal3.io/metal3-remediation-0d3c"
	r.patchSpec(g, "host-0", func(h *bmov1.BareMetalHost) {
		h.Annotations = map[string]string{key: `{"mode":"hard"}`}
	})
	g.Eventually(poweredOn, wait).Should(BeFalse())
	g.Expect(r.state("host-0")()).To(Equal(bmov1.StateProvisioned), "a reboot is not a re-provisioning")

	r.patchSpec(g, "host-0", func(h *bmov1.BareMetalHost) { delete(h.Annotations, key) })
	g.Eventually(poweredOn, wait).Should(BeTrue())
}
