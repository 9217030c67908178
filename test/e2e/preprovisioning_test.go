package e2e

import (
	"context"
	"net/netip"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/simulator"
)

// pausedValue is the pause metalwire sets and lifts for pre-provisioning (the fallback for BMO
// releases without the proposal's gate).
const pausedValue = "metal3.io/preprovisioning"

const pausedAnnotation = "baremetalhost.metal3.io/paused"

// The spare hosts of examples/preprovisioning are inspected with a static address from their own
// pool, on both paths: spare-0 was created paused, spare-1 relies on BMO's gate.
func TestExampleSparesAreInspectedWithTheirNetworkData(t *testing.T) {
	for _, name := range []string{"spare-0", "spare-1"} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			g.Eventually(func(g Gomega) {
				h := host(g, name)
				g.Expect(h.Status.Provisioning.State).To(Equal(bmov1.StateAvailable))
				g.Expect(h.Annotations).NotTo(HaveKey(pausedAnnotation))
				g.Expect(h.Spec.PreprovisioningNetworkDataName).To(Equal(name + "-preprov-networkdata"))
				g.Expect(h.Spec.ConsumerRef).To(BeNil(), "the cluster's hostSelector leaves spares alone")
			}, wait, poll).Should(Succeed())
			// What the ramdisk booted with: an address of the spare pool on the boot NIC.
			nd := networkData(g, name, simulator.PreprovNetworkFile)
			addr := netip.MustParseAddr(nd["provisioning"])
			g.Expect(netip.MustParsePrefix("172.22.0.0/24").Contains(addr)).To(BeTrue(), addr.String())
		})
	}
}

// A host asking for pre-provisioning data from a template that does not exist yet is not
// inspected, on either path, until the template exists and its data is rendered; then it is
// inspected with it. Path "paused": created with metalwire's pause, which metalwire lifts in the
// write that gives the Secret. Path "gate": no pause; the simulator holds it in registering as
// the pre-provisioning proposal asks BMO to.
func TestPreprovisioningHoldsInspectionUntilTheDataExists(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	const template = "late-template"
	paused := newAnnotatedHost(g, "late-paused", template, true)
	gated := newAnnotatedHost(g, "late-gated", template, false)

	// Well past the simulator's registering delay, neither is inspected.
	g.Consistently(func(g Gomega) {
		for _, name := range []string{paused, gated} {
			h := host(g, name)
			g.Expect(h.Status.Provisioning.State).To(BeElementOf(bmov1.StateNone, bmov1.StateRegistering), name)
			g.Expect(h.Status.HardwareDetails).To(BeNil(), name)
			g.Expect(h.Spec.PreprovisioningNetworkDataName).To(BeEmpty(), name)
		}
	}, 2*time.Second, poll).Should(Succeed())
	g.Expect(host(g, paused).Annotations).To(HaveKeyWithValue(pausedAnnotation, pausedValue))

	// The template arrives (reusing the spare pool); both hosts get their data, then inspection.
	tmpl := &unstructured.Unstructured{}
	tmpl.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta2")
	tmpl.SetKind("Metal3PreprovisioningDataTemplate")
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: spareTemplate}, tmpl)).To(Succeed())
	late := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": tmpl.GetAPIVersion(), "kind": tmpl.GetKind(),
		"metadata": map[string]any{"name": template, "namespace": ns},
		"spec":     tmpl.Object["spec"],
	}}
	g.Expect(env.Client.Create(ctx, late)).To(Succeed())

	for _, name := range []string{paused, gated} {
		g.Eventually(func(g Gomega) {
			h := host(g, name)
			g.Expect(h.Status.Provisioning.State).To(Equal(bmov1.StateAvailable), name)
			g.Expect(h.Annotations).NotTo(HaveKey(pausedAnnotation), name)
			secret := &corev1.Secret{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: h.Spec.PreprovisioningNetworkDataName}, secret)).To(Succeed())
			g.Expect(secret.Data).To(HaveKey("networkData"))
		}, wait, poll).Should(Succeed())
		nd := networkData(g, name, simulator.PreprovNetworkFile)
		g.Expect(netip.MustParsePrefix("172.22.0.0/24").Contains(netip.MustParseAddr(nd["provisioning"]))).To(BeTrue(), name)
	}

	// Deleting the hosts gives their addresses back to the pool.
	for _, name := range []string{paused, gated} {
		g.Expect(env.Client.Delete(ctx, host(g, name))).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		list := &ipamv1.IPClaimList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		for _, c := range list.Items {
			g.Expect(c.Name).NotTo(HavePrefix("late-"), "IPClaim %s of a deleted host", c.Name)
		}
	}, wait, poll).Should(Succeed())
}

// newAnnotatedHost enrols a host that asks for pre-provisioning data from template, paused by
// metalwire's pause or not.
func newAnnotatedHost(g Gomega, name, template string, paused bool) string {
	annotations := map[string]string{
		bmov1.PreprovisioningNetworkDataReferenceAnnotation: "metal3preprovisioningdatatemplates.infrastructure.cluster.x-k8s.io/" + template,
	}
	if paused {
		annotations[pausedAnnotation] = pausedValue
	}
	h := &bmov1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: ns, Annotations: annotations,
		Labels: map[string]string{"demo.metalwire.io/role": "spare"},
	}}
	h.Spec.Online = true
	h.Spec.BootMACAddress = simulator.MAC(name, simulator.PXEInterface)
	g.Expect(env.Client.Create(context.Background(), h)).To(Succeed())
	return name
}
