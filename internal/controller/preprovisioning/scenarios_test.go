package preprovisioning_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/schematest"
)

// The seed's first scenario: one pool, belonging to the cluster, for pre-provisioning and
// provisioning. The host's address is claimed under its own name, so it keeps it through
// inspection and past available, ready for the Metal3Data controller to reuse.
func TestCommonPoolHostKeepsItsAddress(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	startManager(t, ns)
	create(t, newPool(ns, "pool-1", "cluster", 10, 10, 20), newTemplate(ns, "preprov-data-template", "pool-1"),
		newHost(ns, "host-0", prefix+"preprov-data-template", infrav1.PreprovisioningPausedAnnotationValue, 1))

	h := waitRendered(t, ns, "host-0")
	address := claimedAddress(t, ns, "host-0-pool-1")
	g.Expect(address).To(HavePrefix("192.168.10."))

	secret := getSecret(g, ns, "host-0-preprov-networkdata")
	g.Expect(secret.Labels).To(HaveKeyWithValue("environment.metal3.io", "baremetal"), "BMO only sees Secrets with this label")
	g.Expect(secret.Type).To(Equal(infrav1.DataSecretType))
	g.Expect(secret.OwnerReferences).To(ConsistOf(And(HaveField("Name", "preprov-data-template"),
		HaveField("Controller", Or(BeNil(), HaveValue(BeFalse()))))), "owned by the template, which is not its controller")
	doc := secret.Data["networkData"]
	g.Expect(schematest.ValidateNetworkData(t, doc)).To(Succeed(), "Ironic refuses network data that fails its schema:\n%s", doc)
	nd := parseNetworkData(g, doc)
	g.Expect(nd.Links).To(ConsistOf(HaveField("MAC", "52:54:00:00:00:01")), "the boot MAC, known before inspection")
	g.Expect(nd.Networks).To(HaveLen(1))
	g.Expect(nd.Networks[0].IPAddress).To(Equal(address))
	g.Expect(nd.Networks[0].Routes).To(ConsistOf(HaveField("Gateway", "192.168.10.1")))
	g.Expect(nd.Services).To(ConsistOf(HaveField("Address", "192.168.10.2")))

	g.Eventually(func(g Gomega) {
		tmpl := getTemplate(g, ns, "preprov-data-template")
		g.Expect(tmpl.Finalizers).To(ContainElement(infrav1.PreprovisioningDataTemplateFinalizer))
		g.Expect(tmpl.Status.Rendered).To(BeEquivalentTo(1))
		g.Expect(tmpl.Status.Failed).To(BeZero())
		g.Expect(tmpl.Status.Hosts).To(ConsistOf(infrav1.PreprovisioningHost{Name: "host-0", SecretName: "host-0-preprov-networkdata", Addresses: []string{address}}))
		g.Expect(tmpl.Status.Conditions).To(ContainElement(And(
			HaveField("Type", infrav1.PreprovisioningReadyCondition), HaveField("Status", metav1.ConditionTrue),
			HaveField("Reason", infrav1.PreprovisioningAllHostsRenderedReason))))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(hostEvent(t, ns, "host-0", "PreprovisioningNetworkDataRendered")).To(ContainSubstring(address))
	g.Expect(hostEvent(t, ns, "host-0", "PreprovisioningPauseRemoved")).To(ContainSubstring("BMO inspects the host"))

	// BMO inspects the host and makes it available: the address stays with the host.
	for _, state := range []bmov1.ProvisioningState{bmov1.StateInspecting, bmov1.StatePreparing, bmov1.StateAvailable} {
		setState(t, ns, "host-0", state)
	}
	g.Consistently(func(g Gomega) {
		c := &ipamv1.IPClaim{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "host-0-pool-1"}, c)).To(Succeed())
		g.Expect(c.DeletionTimestamp.IsZero()).To(BeTrue())
	}).WithTimeout(2 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
	g.Expect(claimedAddress(t, ns, "host-0-pool-1")).To(Equal(address))
	g.Expect(getHost(g, ns, "host-0").Spec.PreprovisioningNetworkDataName).To(Equal(h.Spec.PreprovisioningNetworkDataName))
}

// The seed's second scenario: a small pre-provisioning pool of no cluster. A host gives its
// address back once it is available, and the next host waiting on the full pool gets it.
func TestDecoupledPoolAddressIsReleasedWhenHostIsAvailable(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns)
	create(t, newPool(ns, "preprovisioning-pool", "", 20, 10, 10), // one address
		newPool(ns, "pool-1", "cluster", 21, 10, 20),
		newTemplate(ns, "preprov", "preprovisioning-pool"),
		newHost(ns, "host-a", prefix+"preprov", infrav1.PreprovisioningPausedAnnotationValue, 1))
	waitRendered(t, ns, "host-a")
	g.Expect(claimedAddress(t, ns, "host-a-preprovisioning-pool")).To(Equal("192.168.20.10"))

	// The pool is full: the second host waits, still held, and the template says why.
	create(t, newHost(ns, "host-b", prefix+"preprov", infrav1.PreprovisioningPausedAnnotationValue, 2))
	e := templateError(t, ns, "preprov", "host-b", infrav1.PreprovisioningPoolExhaustedReason)
	g.Expect(e.Message).To(ContainSubstring("IPClaim host-b-preprovisioning-pool"))
	g.Expect(getHost(g, ns, "host-b").Annotations).To(HaveKeyWithValue(bmov1.PausedAnnotation, infrav1.PreprovisioningPausedAnnotationValue))

	// Inspection is not the end of pre-provisioning: the address is kept.
	setState(t, ns, "host-a", bmov1.StateInspecting)
	g.Consistently(func(g Gomega) {
		g.Expect(getHost(g, ns, "host-b").Spec.PreprovisioningNetworkDataName).To(BeEmpty())
	}).WithTimeout(time.Second).Should(Succeed())

	setState(t, ns, "host-a", bmov1.StateAvailable)
	claimGone(t, ns, "host-a-preprovisioning-pool")
	g.Expect(hostEvent(t, ns, "host-a", "PreprovisioningAddressReleased")).To(ContainSubstring("released IPClaim host-a-preprovisioning-pool"))
	// host-a keeps its Secret (BMO still names it); host-b gets the freed address.
	g.Expect(getHost(g, ns, "host-a").Spec.PreprovisioningNetworkDataName).To(Equal("host-a-preprov-networkdata"))
	getSecret(g, ns, "host-a-preprov-networkdata")
	waitRendered(t, ns, "host-b")
	g.Expect(claimedAddress(t, ns, "host-b-preprovisioning-pool")).To(Equal("192.168.20.10"))
	g.Expect(parseNetworkData(g, getSecret(g, ns, "host-b-preprov-networkdata").Data["networkData"]).Networks).To(ConsistOf(HaveField("IPAddress", "192.168.20.10")))
	g.Expect(schematest.ValidateNetworkData(t, getSecret(g, ns, "host-b-preprov-networkdata").Data["networkData"])).To(Succeed())

	// The released host is not claimed again (no churn on the pool) and stays listed as rendered.
	g.Consistently(func(g Gomega) {
		c := &ipamv1.IPClaimList{}
		g.Expect(env.Client.List(context.Background(), c, client.InNamespace(ns))).To(Succeed())
		g.Expect(c.Items).To(HaveEach(HaveField("Name", "host-b-preprovisioning-pool")))
	}).WithTimeout(2 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(getTemplate(g, ns, "preprov").Status.Rendered).To(BeEquivalentTo(2))
	}).WithTimeout(timeout).Should(Succeed())
}

// A restarted controller starts with no memory: it must neither render hosts again nor lose them
// from the template's status.
func TestRestartKeepsRenderedHostsAsTheyAre(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	stop := startManager(t, ns)
	create(t, newPool(ns, "pool", "", 60, 10, 20), newTemplate(ns, "tmpl", "pool"),
		newHost(ns, "host-0", prefix+"tmpl", infrav1.PreprovisioningPausedAnnotationValue, 1))
	waitRendered(t, ns, "host-0")
	address := claimedAddress(t, ns, "host-0-pool")
	secret := getSecret(g, ns, "host-0-preprov-networkdata")
	g.Eventually(func(g Gomega) {
		g.Expect(getTemplate(g, ns, "tmpl").Status.Rendered).To(BeEquivalentTo(1))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	stop()

	// While it is down, the template's status is emptied, as if lost.
	tmpl := getTemplate(g, ns, "tmpl")
	tmpl.Status = infrav1.Metal3PreprovisioningDataTemplateStatus{}
	g.Expect(env.Client.Status().Update(ctx, tmpl)).To(Succeed())

	startManager(t, ns)
	g.Eventually(func(g Gomega) {
		st := getTemplate(g, ns, "tmpl").Status
		g.Expect(st.Hosts).To(ConsistOf(infrav1.PreprovisioningHost{Name: "host-0", SecretName: secret.Name, Addresses: []string{address}}))
		g.Expect(st.Conditions).To(ContainElement(HaveField("Reason", infrav1.PreprovisioningAllHostsRenderedReason)))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(getSecret(g, ns, secret.Name).ResourceVersion).To(Equal(secret.ResourceVersion), "the Secret is not written again")
		g.Expect(claims(g, ns)).To(Equal([]string{"host-0-pool"}))
	}).WithTimeout(2 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
	g.Expect(claimedAddress(t, ns, "host-0-pool")).To(Equal(address))
}

// A host annotated after a Metal3Data claimed its host-keyed address (re-inspection of a host
// that was provisioned with IP reuse) shares that claim, so it keeps the same address.
func TestExistingHostKeyedClaimIsShared(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	startManager(t, ns)
	data := metav1.OwnerReference{APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3Data", Name: "workers-3", UID: "5f0e6c1e-0000-4000-8000-000000000003"}
	claim := &ipamv1.IPClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "host-0-pool", Namespace: ns, OwnerReferences: []metav1.OwnerReference{data},
			Annotations: map[string]string{ipamv1.IPAddressAnnotation: "192.168.61.15"}},
		Spec: ipamv1.IPClaimSpec{Pool: corev1.ObjectReference{Name: "pool"}},
	}
	create(t, newPool(ns, "pool", "cluster", 61, 10, 20), claim)
	g.Expect(claimedAddress(t, ns, "host-0-pool")).To(Equal("192.168.61.15"))

	create(t, newTemplate(ns, "tmpl", "pool"), newHost(ns, "host-0", prefix+"tmpl", infrav1.PreprovisioningPausedAnnotationValue, 1))
	waitRendered(t, ns, "host-0")
	g.Expect(parseNetworkData(g, getSecret(g, ns, "host-0-preprov-networkdata").Data["networkData"]).Networks).To(ConsistOf(HaveField("IPAddress", "192.168.61.15")))
	got := &ipamv1.IPClaim{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "host-0-pool"}, got)).To(Succeed())
	g.Expect(got.OwnerReferences).To(ConsistOf(HaveField("Kind", "Metal3Data"), HaveField("Kind", "Metal3PreprovisioningDataTemplate")))
	g.Expect(claims(g, ns)).To(Equal([]string{"host-0-pool"}))
}
