package preprovisioning_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
)

// A host as BMO and its user write it, with fields our BareMetalHost subset does not model.
const bmoHost = `
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: host-0
  labels: {rack: r1}
  annotations:
    baremetalhost.metal3.io/preprovisioningnetworkdata-reference: metal3preprovisioningdatatemplates.infrastructure.cluster.x-k8s.io/tmpl
    example.com/owner: team-a
spec:
  online: true
  bootMACAddress: "52:54:00:00:00:01"
  bmc: {address: "redfish://192.0.2.1/redfish/v1/Systems/1", credentialsName: host-0-bmc}
  rootDeviceHints: {deviceName: /dev/sda}
  automatedCleaningMode: metadata
`

func unstructuredHost(g Gomega, ns string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("metal3.io/v1alpha1")
	u.SetKind("BareMetalHost")
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "host-0"}, u)).To(Succeed())
	return u
}

// Removing the annotation removes what it brought (claim, Secret, the name) and nothing else.
func TestAnnotationRemovedCleansUp(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	startManager(t, ns)
	create(t, newPool(ns, "pool", "", 40, 10, 20), newTemplate(ns, "tmpl", "pool"))
	u := &unstructured.Unstructured{}
	g.Expect(yaml.Unmarshal([]byte(bmoHost), &u.Object)).To(Succeed())
	u.SetNamespace(ns)
	g.Expect(env.Client.Create(ctx, u)).To(Succeed())
	waitRendered(t, ns, "host-0")
	claimedAddress(t, ns, "host-0-pool")

	rendered := unstructuredHost(g, ns)
	patch := []byte(`{"metadata":{"annotations":{"baremetalhost.metal3.io/preprovisioningnetworkdata-reference":null}}}`)
	g.Expect(env.Client.Patch(ctx, rendered.DeepCopy(), client.RawPatch(types.MergePatchType, patch))).To(Succeed())

	claimGone(t, ns, "host-0-pool")
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "host-0-preprov-networkdata"}, &corev1.Secret{}))
	}).WithTimeout(timeout).WithPolling(poll).Should(BeTrue(), "the Secret should be deleted")
	g.Eventually(func(g Gomega) {
		g.Expect(getHost(g, ns, "host-0").Spec.PreprovisioningNetworkDataName).To(BeEmpty())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(hostEvent(t, ns, "host-0", "PreprovisioningNetworkDataRemoved")).To(ContainSubstring("IPClaim host-0-pool"))

	// Everything else is as it was.
	after := unstructuredHost(g, ns)
	wantSpec := rendered.Object["spec"].(map[string]any)
	delete(wantSpec, "preprovisioningNetworkDataName")
	g.Expect(after.Object["spec"]).To(Equal(wantSpec))
	g.Expect(after.GetLabels()).To(Equal(map[string]string{"rack": "r1"}))
	g.Expect(after.GetAnnotations()).To(Equal(map[string]string{"example.com/owner": "team-a"}))
	g.Eventually(func(g Gomega) {
		tmpl := getTemplate(g, ns, "tmpl")
		g.Expect(tmpl.Status.Hosts).To(BeEmpty())
		g.Expect(tmpl.Status.Conditions).To(ContainElement(HaveField("Reason", infrav1.PreprovisioningNoHostsReason)))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// A claim a Metal3Data also uses (IP reuse, the common pool) outlives our use of it: we only drop
// our owner reference.
func TestSharedClaimIsLeftToItsOtherOwner(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	startManager(t, ns)
	create(t, newPool(ns, "pool", "cluster", 41, 10, 20), newTemplate(ns, "tmpl", "pool"), newHost(ns, "host-0", prefix+"tmpl", "", 1))
	waitRendered(t, ns, "host-0")
	address := claimedAddress(t, ns, "host-0-pool")

	// The Metal3Data controller adopts the host-keyed claim, as it does with IP reuse.
	data := metav1.OwnerReference{APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3Data", Name: "workers-0", UID: "5f0e6c1e-0000-4000-8000-000000000001"}
	g.Eventually(func(g Gomega) {
		c := &ipamv1.IPClaim{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "host-0-pool"}, c)).To(Succeed())
		before := c.DeepCopy()
		c.OwnerReferences = append(c.OwnerReferences, data)
		g.Expect(env.Client.Patch(ctx, c, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))).To(Succeed())
	}).WithTimeout(timeout).Should(Succeed())

	h := getHost(g, ns, "host-0")
	before := h.DeepCopy()
	delete(h.Annotations, bmov1.PreprovisioningNetworkDataReferenceAnnotation)
	g.Expect(env.Client.Patch(ctx, h, client.MergeFrom(before))).To(Succeed())

	g.Eventually(func(g Gomega) {
		c := &ipamv1.IPClaim{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "host-0-pool"}, c)).To(Succeed())
		g.Expect(c.DeletionTimestamp.IsZero()).To(BeTrue())
		g.Expect(c.OwnerReferences).To(ConsistOf(HaveField("Kind", "Metal3Data")))
		g.Expect(c.Labels).NotTo(HaveKey(infrav1.PreprovisioningDataTemplateLabel))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(claimedAddress(t, ns, "host-0-pool")).To(Equal(address), "the Metal3Data keeps the host's address")
}

// A deleted host's claims and Secret go with it.
func TestDeletedHostReleasesItsAddress(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns)
	create(t, newPool(ns, "pool", "", 42, 10, 20), newTemplate(ns, "tmpl", "pool"), newHost(ns, "host-0", prefix+"tmpl", "", 1))
	waitRendered(t, ns, "host-0")
	claimedAddress(t, ns, "host-0-pool")

	g.Expect(env.Client.Delete(context.Background(), getHost(g, ns, "host-0"))).To(Succeed())
	claimGone(t, ns, "host-0-pool")
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "host-0-preprov-networkdata"}, &corev1.Secret{}))
	}).WithTimeout(timeout).WithPolling(poll).Should(BeTrue())
}

// Deleting the template takes back what it gave every host, then lets the template go.
func TestDeletedTemplateReleasesItsHosts(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	startManager(t, ns)
	create(t, newPool(ns, "pool", "", 43, 10, 20), newTemplate(ns, "tmpl", "pool"),
		newHost(ns, "host-0", prefix+"tmpl", "", 1), newHost(ns, "host-1", prefix+"tmpl", "", 2))
	waitRendered(t, ns, "host-0")
	waitRendered(t, ns, "host-1")
	g.Eventually(func(g Gomega) {
		g.Expect(getTemplate(g, ns, "tmpl").Finalizers).To(ContainElement(infrav1.PreprovisioningDataTemplateFinalizer))
	}).WithTimeout(timeout).Should(Succeed())

	g.Expect(env.Client.Delete(ctx, getTemplate(g, ns, "tmpl"))).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "tmpl"}, &infrav1.Metal3PreprovisioningDataTemplate{}))
	}).WithTimeout(timeout).WithPolling(poll).Should(BeTrue(), "the template should go once its hosts are released")
	for _, host := range []string{"host-0", "host-1"} {
		claimGone(t, ns, host+"-pool")
		g.Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: host + "-preprov-networkdata"}, &corev1.Secret{}))).To(BeTrue())
			g.Expect(getHost(g, ns, host).Spec.PreprovisioningNetworkDataName).To(BeEmpty(), "a name pointing at a deleted Secret would break BMO")
		}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	}
}

// Pointing a host at another template replaces what the first one gave it.
func TestSwitchingTemplatesReplacesTheData(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	startManager(t, ns)
	create(t, newPool(ns, "pool-a", "", 44, 10, 20), newPool(ns, "pool-b", "", 45, 10, 20),
		newTemplate(ns, "tmpl-a", "pool-a"), newTemplate(ns, "tmpl-b", "pool-b"), newHost(ns, "host-0", prefix+"tmpl-a", "", 1))
	waitRendered(t, ns, "host-0")
	claimedAddress(t, ns, "host-0-pool-a")

	h := getHost(g, ns, "host-0")
	before := h.DeepCopy()
	h.Annotations[bmov1.PreprovisioningNetworkDataReferenceAnnotation] = prefix + "tmpl-b"
	g.Expect(env.Client.Patch(ctx, h, client.MergeFrom(before))).To(Succeed())

	claimGone(t, ns, "host-0-pool-a")
	address := claimedAddress(t, ns, "host-0-pool-b")
	g.Expect(address).To(HavePrefix("192.168.45."))
	g.Eventually(func(g Gomega) {
		s := getSecret(g, ns, "host-0-preprov-networkdata")
		g.Expect(s.Labels).To(HaveKeyWithValue(infrav1.PreprovisioningDataTemplateLabel, "tmpl-b"))
		g.Expect(parseNetworkData(g, s.Data["networkData"]).Networks).To(ConsistOf(HaveField("IPAddress", address)))
		g.Expect(getHost(g, ns, "host-0").Spec.PreprovisioningNetworkDataName).To(Equal("host-0-preprov-networkdata"))
		g.Expect(getTemplate(g, ns, "tmpl-a").Status.Hosts).To(BeEmpty())
		g.Expect(getTemplate(g, ns, "tmpl-b").Status.Hosts).To(ConsistOf(HaveField("Name", "host-0")))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}
