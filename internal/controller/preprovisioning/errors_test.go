package preprovisioning_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// Wrong annotation values are listed by the template the user most likely meant, and told to
// the host.
func TestBadReferencesAreReportedOnTheTemplateAndTheHost(t *testing.T) {
	g := NewWithT(t)
	ns, other := newNamespace(t), newNamespace(t)
	startManager(t, ns, other)
	create(t, newPool(ns, "pool", "", 50, 10, 20), newTemplate(ns, "tmpl", "pool"), newTemplate(other, "tmpl", "pool"),
		newHost(ns, "bare-name", "tmpl", infrav1.PreprovisioningPausedAnnotationValue, 1),
		newHost(ns, "other-kind", "metal3datatemplates.infrastructure.cluster.x-k8s.io/tmpl", "", 2),
		newHost(ns, "other-ns", prefix+other+"/tmpl", "", 3),
		newHost(ns, "good", prefix+"tmpl", "", 4))

	e := templateError(t, ns, "tmpl", "bare-name", infrav1.PreprovisioningBadReferenceReason)
	g.Expect(e.Reason).To(Equal(infrav1.PreprovisioningBadReferenceReason))
	g.Expect(e.Message).To(Equal(`annotation baremetalhost.metal3.io/preprovisioningnetworkdata-reference: "tmpl" is not <resource>.<group>/<name>; write metal3preprovisioningdatatemplates.infrastructure.cluster.x-k8s.io/<template name>`))
	g.Expect(hostEvent(t, ns, "bare-name", infrav1.PreprovisioningBadReferenceReason)).To(Equal(e.Message))

	e = templateError(t, ns, "tmpl", "other-kind", infrav1.PreprovisioningBadReferenceReason)
	g.Expect(e.Message).To(ContainSubstring("names metal3datatemplates.infrastructure.cluster.x-k8s.io, which is not a Metal3PreprovisioningDataTemplate"))

	// A template of another namespace lists the host, with its namespace.
	e = templateError(t, other, "tmpl", ns+"/other-ns", infrav1.PreprovisioningBadReferenceReason)
	g.Expect(e.Reason).To(Equal(infrav1.PreprovisioningBadReferenceReason))
	g.Expect(e.Message).To(ContainSubstring("templates are only looked up in the host's namespace " + ns + "; create the template in " + ns))

	waitRendered(t, ns, "good")
	g.Eventually(func(g Gomega) {
		tmpl := getTemplate(g, ns, "tmpl")
		g.Expect(tmpl.Status.Rendered).To(BeEquivalentTo(1))
		g.Expect(tmpl.Status.Failed).To(BeEquivalentTo(2))
		g.Expect(tmpl.Status.Conditions).To(ContainElement(And(HaveField("Status", metav1.ConditionFalse),
			HaveField("Reason", infrav1.PreprovisioningHostsFailedReason),
			HaveField("Message", "2 of 3 hosts not rendered: bare-name (BadReference), other-kind (BadReference); status.errors says why"))))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	// No claim and no Secret for a host whose reference is wrong, and it stays held.
	g.Expect(getHost(g, ns, "bare-name").Annotations).To(HaveKeyWithValue(bmov1.PausedAnnotation, infrav1.PreprovisioningPausedAnnotationValue))
	g.Expect(getHost(g, ns, "bare-name").Spec.PreprovisioningNetworkDataName).To(BeEmpty())

	// Fixing the annotation fixes the host and the status.
	h := getHost(g, ns, "bare-name")
	h.Annotations[bmov1.PreprovisioningNetworkDataReferenceAnnotation] = prefix + "tmpl"
	g.Expect(env.Client.Update(context.Background(), h)).To(Succeed())
	waitRendered(t, ns, "bare-name")
}

func TestMissingTemplateSaysWhereOneOfThatNameIs(t *testing.T) {
	ns, other := newNamespace(t), newNamespace(t)
	startManager(t, ns, other)
	create(t, newPool(other, "pool", "", 51, 10, 20), newTemplate(other, "rack-1", "pool"), newHost(ns, "host-0", prefix+"rack-1", "", 1))
	NewWithT(t).Expect(hostEvent(t, ns, "host-0", "TemplateNotFound")).To(Equal(
		"Metal3PreprovisioningDataTemplate rack-1 not found in namespace " + ns + " (one exists in namespace [" + other +
			"], but a host only uses templates of its own namespace); create it in " + ns))
}

// A template that needs an inspected NIC cannot serve a host held until it is rendered: the
// error names the field and the way out, and the host renders once it has the NICs.
func TestTemplateNeedingInspectionSaysWhichField(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	startManager(t, ns)
	tmpl := newTemplate(ns, "tmpl", "pool")
	tmpl.Spec.PreprovisioningNetworkData.Links.Ethernets[0].MACAddress = &infrav1.NetworkLinkEthernetMac{FromHostInterface: ptr.To("eno1")}
	create(t, newPool(ns, "pool", "", 52, 10, 20), tmpl, newHost(ns, "host-0", prefix+"tmpl", infrav1.PreprovisioningPausedAnnotationValue, 1))

	e := templateError(t, ns, "tmpl", "host-0", infrav1.PreprovisioningRenderFailedReason)
	g.Expect(e.Message).To(HavePrefix("preprovisioningNetworkData.links.ethernets[0].macAddress.fromHostInterface: needs host host-0's inspected NICs"))
	g.Expect(e.Message).To(ContainSubstring("fromBootMAC: true"))
	g.Expect(hostEvent(t, ns, "host-0", infrav1.PreprovisioningRenderFailedReason)).To(Equal(e.Message))
	g.Expect(getHost(g, ns, "host-0").Annotations).To(HaveKeyWithValue(bmov1.PausedAnnotation, infrav1.PreprovisioningPausedAnnotationValue))
	g.Expect(claims(g, ns)).To(BeEmpty(), "a host that cannot be rendered takes no address")

	// Inspected some other way (a host annotated after inspection): now it renders.
	h := getHost(g, ns, "host-0")
	before := h.DeepCopy()
	h.Status.HardwareDetails = &bmov1.HardwareDetails{NIC: []bmov1.NIC{{Name: "eno1", MAC: "52:54:00:aa:bb:cc"}}}
	g.Expect(env.Client.Status().Patch(ctx, h, client.MergeFrom(before))).To(Succeed())
	waitRendered(t, ns, "host-0")
	g.Expect(parseNetworkData(g, getSecret(g, ns, "host-0-preprov-networkdata").Data["networkData"]).Links).To(ConsistOf(HaveField("MAC", "52:54:00:aa:bb:cc")))
	g.Eventually(func(g Gomega) {
		g.Expect(getTemplate(g, ns, "tmpl").Status.Errors).To(BeEmpty())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// Ironic cannot inject network data into a live ISO: the host is warned, and rendered anyway.
func TestLiveISOHostIsWarned(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns)
	h := newHost(ns, "host-0", prefix+"tmpl", "", 1)
	h.Spec.Image = &bmov1.Image{URL: "http://images/live.iso", DiskFormat: ptr.To("live-iso")}
	create(t, newPool(ns, "pool", "", 53, 10, 20), newTemplate(ns, "tmpl", "pool"), h)
	waitRendered(t, ns, "host-0")
	g.Expect(hostEvent(t, ns, "host-0", infrav1.PreprovisioningLiveISOReason)).To(ContainSubstring("Ironic cannot inject network data"))
}

// Data we did not write is never overwritten: a Secret of our name, or the user's own name in
// the field.
func TestOthersDataIsNeverReplaced(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns)
	own := newHost(ns, "own-name", prefix+"tmpl", infrav1.PreprovisioningPausedAnnotationValue, 1)
	own.Spec.PreprovisioningNetworkDataName = "handmade"
	foreign := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "own-secret-preprov-networkdata", Namespace: ns},
		StringData: map[string]string{"networkData": "links: []"},
	}
	create(t, newPool(ns, "pool", "", 54, 10, 20), newTemplate(ns, "tmpl", "pool"), foreign, own,
		newHost(ns, "own-secret", prefix+"tmpl", "", 2))

	e := templateError(t, ns, "tmpl", "own-name", "PreprovisioningNetworkDataNameInUse")
	g.Expect(e.Message).To(ContainSubstring("spec.preprovisioningNetworkDataName already names Secret handmade"))
	e = templateError(t, ns, "tmpl", "own-secret", "PreprovisioningNetworkDataNameInUse")
	g.Expect(e.Message).To(Equal("Secret own-secret-preprov-networkdata already exists and was not written by metalwire for a pre-provisioning template; delete or rename it"))

	g.Consistently(func(g Gomega) {
		h := getHost(g, ns, "own-name")
		g.Expect(h.Spec.PreprovisioningNetworkDataName).To(Equal("handmade"))
		g.Expect(h.Annotations).To(HaveKeyWithValue(bmov1.PausedAnnotation, infrav1.PreprovisioningPausedAnnotationValue))
		g.Expect(string(getSecret(g, ns, "own-secret-preprov-networkdata").Data["networkData"])).To(Equal("links: []"))
	}).WithTimeout(2 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
	g.Expect(claims(g, ns)).NotTo(ContainElement("own-name-pool"), "a host whose field is taken takes no address")
}

// Pre-provisioning claims with IPClaims only; a template naming another IPAM provider's pool
// says so.
func TestOtherIPAMProvidersAreRefused(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns)
	tmpl := newTemplate(ns, "tmpl", "pool")
	net := &tmpl.Spec.PreprovisioningNetworkData.Networks.IPv4[0]
	net.IPAddressFromIPPool = ""
	net.FromPoolRef = &infrav1.IPPoolReference{APIGroup: "ipam.cluster.x-k8s.io", Kind: "InClusterIPPool", Name: "incluster"}
	create(t, newPool(ns, "pool", "", 55, 10, 20), tmpl, newHost(ns, "host-0", prefix+"tmpl", "", 1))
	e := templateError(t, ns, "tmpl", "host-0", infrav1.PreprovisioningRenderFailedReason)
	g.Expect(e.Message).To(ContainSubstring("pools InClusterIPPool.ipam.cluster.x-k8s.io/incluster are not ipam.metal3.io IPPools"))
}
