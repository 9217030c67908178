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

// A change of the machine's automatedCleaningMode reaches its host after provisioning too (upstream
// writes it on every reconcile; it used to be written with the first image only), so that the
// cleaning done when the machine goes is the one the user asked for last.
func TestCleaningModeFollowsTheMachine(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	cluster := createCluster(t, ns, "c1", clusterOpts{cloudProviderEnabled: ptr.To(true)})
	createHost(t, ns, "h1", nil, bmov1.StateAvailable)
	m3m := createMachine(t, cluster, "m1", machineOpts{bootstrap: "b", cleaning: ptr.To(infrav1.CleaningModeDisabled)})
	g.Eventually(func(g Gomega) {
		h := getHost(g, ns, "h1")
		g.Expect(h.Spec.Image).NotTo(BeNil())
		g.Expect(h.Spec.AutomatedCleaningMode).To(Equal("disabled"))
	}, eventually, poll).Should(Succeed())
	setHostState(t, ns, "h1", bmov1.StateProvisioned)

	g.Expect(env.Client.Patch(ctx, getM3M(g, m3m), client.RawPatch(types.MergePatchType,
		[]byte(`{"spec":{"automatedCleaningMode":"metadata"}}`)))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(getHost(g, ns, "h1").Spec.AutomatedCleaningMode).To(Equal("metadata"))
	}, eventually, poll).Should(Succeed())
	expectBMOFieldsKept(g, getHostUnstructured(g, ns, "h1"))
}

// A host marked disablePowerOff is deprovisioned and released powered on: BMO refuses
// online: false on such a host, so writing it would leave the machine stuck.
func TestDeprovisionKeepsADisablePowerOffHostOn(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	cluster := createCluster(t, ns, "c1", clusterOpts{cloudProviderEnabled: ptr.To(true)})
	host := createHost(t, ns, "h1", nil, bmov1.StateAvailable)
	g.Expect(env.Client.Patch(ctx, host, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"disablePowerOff":true}}`)))).To(Succeed())
	m3m := createMachine(t, cluster, "m1", machineOpts{bootstrap: "b"})
	g.Eventually(func(g Gomega) {
		g.Expect(getHost(g, ns, "h1").Spec.Image).NotTo(BeNil())
	}, eventually, poll).Should(Succeed())
	setHostState(t, ns, "h1", bmov1.StateProvisioned)
	g.Eventually(func(g Gomega) {
		g.Expect(getM3M(g, m3m).Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
	}, eventually, poll).Should(Succeed())

	g.Expect(env.Client.Delete(ctx, m3m)).To(Succeed())
	g.Eventually(func(g Gomega) {
		h := getHost(g, ns, "h1")
		g.Expect(h.Spec.Image).To(BeNil())
		g.Expect(h.Spec.ConsumerRef).NotTo(BeNil(), "still claimed while BMO deprovisions")
		g.Expect(h.Spec.Online).To(BeTrue(), "a disablePowerOff host is never told to power off")
	}, eventually, poll).Should(Succeed())

	setHostState(t, ns, "h1", bmov1.StateAvailable)
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(m3m), &infrav1.Metal3Machine{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
	}, eventually, poll).Should(Succeed())
	h := getHost(g, ns, "h1")
	g.Expect(h.Spec.ConsumerRef).To(BeNil())
	g.Expect(h.Spec.Online).To(BeTrue())
	g.Expect(h.Spec.DisablePowerOff).To(BeTrue())
	expectBMOFieldsKept(g, getHostUnstructured(g, ns, "h1"))
}
