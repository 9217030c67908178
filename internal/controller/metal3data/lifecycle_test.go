package metal3data_test

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gstruct"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/pkg/render"
)

// simpleTemplate takes an address from pool "prov" for NIC eth0 and reads the host's rack label.
const simpleTemplate = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3DataTemplate
metadata: {name: x}
spec:
  metaData:
    ipAddressesFromPool: [{key: ip, name: prov}]
    fromLabels: [{key: rack, object: baremetalhost, label: example.com/rack}]
  networkData:
    links:
      ethernets: [{type: phy, id: eth0, macAddress: {fromHostInterface: eth0}}]
    networks:
      ipv4: [{id: prov, link: eth0, ipAddressFromIPPool: prov}]
`

func specOf(t *testing.T, manifest string) infrav1.Metal3DataTemplateSpec {
	t.Helper()
	decoded, err := render.DecodeTemplate([]byte(manifest))
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return infrav1.Metal3DataTemplateSpec{ClusterName: "cluster-a", MetaData: decoded.MetaData, NetworkData: decoded.NetworkData}
}

// expectBlocked waits until the Metal3Data is not ready for the given reason, with a message
// containing want, and the claim shows the same message.
func expectBlocked(t *testing.T, ns, claimName, reason, want string, isError bool) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		c := getClaim(g, ns, claimName)
		g.Expect(c.Status.RenderedData).NotTo(BeNil())
		d := getData(g, ns, c.Status.RenderedData.Name)
		g.Expect(d.Status.Ready).To(BeFalse())
		ready := condition(d.Status.Conditions, infrav1.DataReadyCondition)
		g.Expect(ready.Reason).To(Equal(reason))
		g.Expect(ready.Message).To(ContainSubstring(want))
		claimReady := condition(c.Status.Conditions, infrav1.DataClaimReadyCondition)
		g.Expect(claimReady.Status).To(Equal(metav1.ConditionFalse))
		if isError {
			g.Expect(claimReady.Message).To(ContainSubstring(want))
			g.Expect(d.Status.ErrorMessage).To(gstruct.PointTo(ContainSubstring(want)))
			g.Expect(c.Status.ErrorMessage).To(gstruct.PointTo(ContainSubstring(want)))
		} else {
			g.Expect(claimReady.Message).To(ContainSubstring("waiting for Metal3Data " + d.Name))
			g.Expect(d.Status.ErrorMessage).To(BeNil())
		}
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// TestWaitsForHostThenRenders: a machine without a host waits, saying so; once the machine
// controller associates a host the data is rendered without any restart.
func TestWaitsForHostThenRenders(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, ns, managerOptions{})
	pool(t, ns, "prov", "192.168.0.10", "192.168.0.20", 24, "192.168.0.1")
	template(t, ns, "tmpl", specOf(t, simpleTemplate))
	host(t, ns, "node-0", map[string]string{"example.com/rack": "r1"}, nil, "", "eth0=52:54:00:00:00:01")
	machine(t, ns, "m3m-0", "tmpl", machineOpts{})

	expectBlocked(t, ns, "m3m-0", infrav1.DataWaitingForHostReason, "has no BareMetalHost yet", false)

	associate(t, ns, "m3m-0", "node-0")
	data := renderedData(t, ns, "m3m-0")
	g := NewWithT(t)
	md := getSecret(g, ns, data.Spec.MetaData.Name)
	g.Expect(string(md.Data["metaData"])).To(Equal("ip: 192.168.0.10\nproviderid: " + ns + "/node-0/m3m-0\nrack: r1\n"))
	g.Expect(data.Spec.MetaData.Name).To(Equal("m3m-0-metadata-0"))
	g.Expect(data.Spec.NetworkData.Name).To(Equal("m3m-0-networkdata-0"))

	ipClaim := &ipamv1.IPClaim{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "tmpl-0-prov"}, ipClaim)).To(Succeed(),
		"the IPClaim is named <metal3data>-<pool>")
	g.Expect(metav1.GetControllerOf(ipClaim).Name).To(Equal("tmpl-0"))
}

// TestMissingNICReportedThenFixed: a template naming a NIC the host lacks is an error on the
// Metal3Data and the claim; when the host is re-inspected with that NIC, it renders.
func TestMissingNICReportedThenFixed(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	startManager(t, ns, managerOptions{})
	pool(t, ns, "prov", "192.168.0.10", "192.168.0.20", 24, "")
	template(t, ns, "tmpl", specOf(t, simpleTemplate))
	h := host(t, ns, "node-0", nil, nil, "", "eno1=52:54:00:00:00:01")
	machine(t, ns, "m3m-0", "tmpl", machineOpts{host: "node-0"})

	expectBlocked(t, ns, "m3m-0", infrav1.DataRenderFailedReason, `host node-0 has no NIC "eth0"`, true)

	addNIC(t, h, "eth0", "52:54:00:00:00:02")

	data := renderedData(t, ns, "m3m-0")
	g := NewWithT(t)
	g.Expect(data.Status.ErrorMessage).To(BeNil())
	nd := getSecret(g, ns, data.Spec.NetworkData.Name)
	g.Expect(string(nd.Data["networkData"])).To(ContainSubstring(`ethernet_mac_address: "52:54:00:00:00:02"`))
	c := getClaim(g, ns, "m3m-0")
	g.Expect(c.Status.ErrorMessage).To(BeNil())
	g.Expect(condition(c.Status.Conditions, infrav1.DataClaimReadyCondition).Status).To(Equal(metav1.ConditionTrue))

	// The story is in the events too: the error, then the rendering.
	NewWithT(t).Eventually(func(g Gomega) {
		list := &eventsv1.EventList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.Kind == "Metal3Data" && e.Regarding.Name == data.Name {
				seen = append(seen, e.Type+" "+e.Reason+": "+e.Note)
			}
		}
		g.Expect(seen).To(ContainElement(ContainSubstring(`Warning RenderFailed: networkData.links.ethernets[0].macAddress.fromHostInterface: host node-0 has no NIC "eth0"`)))
		g.Expect(seen).To(ContainElement("Normal Rendered: rendered index 0 into Secrets m3m-0-metadata-0, m3m-0-networkdata-0"))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// TestExhaustedPoolResolvedByGrowingIt: with one address for two hosts, the second shows the
// pool is exhausted; growing the pool renders it, with no restart.
func TestExhaustedPoolResolvedByGrowingIt(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	startManager(t, ns, managerOptions{})
	p := pool(t, ns, "prov", "192.168.0.10", "192.168.0.10", 24, "")
	template(t, ns, "tmpl", specOf(t, simpleTemplate))
	host(t, ns, "node-0", nil, nil, "", "eth0=52:54:00:00:00:01")
	host(t, ns, "node-1", nil, nil, "", "eth0=52:54:00:00:00:02")
	machine(t, ns, "m3m-0", "tmpl", machineOpts{host: "node-0"})
	renderedData(t, ns, "m3m-0")
	machine(t, ns, "m3m-1", "tmpl", machineOpts{host: "node-1"})

	expectBlocked(t, ns, "m3m-1", infrav1.DataPoolExhaustedReason, "no free address", true)

	g := NewWithT(t)
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
	p.Spec.Pools[0].End = addr("192.168.0.11")
	g.Expect(env.Client.Update(ctx, p)).To(Succeed())

	data := renderedData(t, ns, "m3m-1")
	md := getSecret(g, ns, data.Spec.MetaData.Name)
	g.Expect(string(md.Data["metaData"])).To(ContainSubstring("ip: 192.168.0.11"))
	g.Expect(data.Status.ErrorMessage).To(BeNil())
}

// TestTemplateChangesDoNotTouchRenderedHosts: the API refuses edits to a template's data; a
// new template serves new claims while the existing Secrets stay as they were, even when an
// input they were rendered from (a host label) changes.
func TestTemplateChangesDoNotTouchRenderedHosts(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	startManager(t, ns, managerOptions{})
	pool(t, ns, "prov", "192.168.0.10", "192.168.0.20", 24, "")
	tmpl := template(t, ns, "v1", specOf(t, simpleTemplate))
	h := host(t, ns, "node-0", map[string]string{"example.com/rack": "r1"}, nil, "", "eth0=52:54:00:00:00:01")
	host(t, ns, "node-1", map[string]string{"example.com/rack": "r2"}, nil, "", "eth0=52:54:00:00:00:02")
	machine(t, ns, "m3m-0", "v1", machineOpts{host: "node-0"})
	data := renderedData(t, ns, "m3m-0")
	g := NewWithT(t)
	md := getSecret(g, ns, data.Spec.MetaData.Name)
	nd := getSecret(g, ns, data.Spec.NetworkData.Name)

	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(tmpl), tmpl)).To(Succeed())
	tmpl.Spec.MetaData.Strings = []infrav1.MetaDataString{{Key: "role", Value: "worker"}}
	err := env.Client.Update(ctx, tmpl)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "editing a template's metaData must be refused: %v", err)
	g.Expect(err.Error()).To(ContainSubstring("metaData is immutable"))

	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(h), h)).To(Succeed())
	h.Labels["example.com/rack"] = "r9"
	g.Expect(env.Client.Update(ctx, h)).To(Succeed())

	v2 := specOf(t, simpleTemplate)
	v2.MetaData.Strings = []infrav1.MetaDataString{{Key: "role", Value: "worker"}}
	template(t, ns, "v2", v2)
	machine(t, ns, "m3m-1", "v2", machineOpts{host: "node-1"})
	data1 := renderedData(t, ns, "m3m-1")
	g.Expect(data1.Name).To(Equal("v2-0"))
	g.Expect(string(getSecret(g, ns, data1.Spec.MetaData.Name).Data["metaData"])).To(ContainSubstring("role: worker"))

	g.Consistently(func(g Gomega) {
		g.Expect(getSecret(g, ns, md.Name).Data).To(Equal(md.Data))
		g.Expect(getSecret(g, ns, nd.Name).Data).To(Equal(nd.Data))
		g.Expect(getData(g, ns, data.Name).Status.Ready).To(BeTrue())
	}).WithTimeout(2 * timeout / 30).WithPolling(poll).Should(Succeed())
	g.Expect(string(md.Data["metaData"])).To(ContainSubstring("rack: r1"))

	// Deleting a Secret now cannot give the host what it had: the label changed. The Metal3Data
	// says so instead of writing different content.
	g.Expect(env.Client.Delete(ctx, md)).To(Succeed())
	NewWithT(t).Eventually(func(g Gomega) {
		d := getData(g, ns, data.Name)
		g.Expect(d.Status.ErrorMessage).To(gstruct.PointTo(ContainSubstring("rendering again gives different content")))
		g.Expect(condition(d.Status.Conditions, infrav1.DataSecretsReadyCondition).Status).To(Equal(metav1.ConditionFalse))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(md), &corev1.Secret{}))).To(BeTrue())

	// Restoring the input restores the Secret, identical.
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(h), h)).To(Succeed())
	h.Labels["example.com/rack"] = "r1"
	g.Expect(env.Client.Update(ctx, h)).To(Succeed())
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(getSecret(g, ns, md.Name).Data).To(Equal(md.Data))
		g.Expect(getData(g, ns, data.Name).Status.ErrorMessage).To(BeNil())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// TestClaimDeletionCleansUp: deleting the claim deletes the Metal3Data, its IPClaim (releasing
// the address) and its Secrets, and frees the index for the next claim.
func TestClaimDeletionCleansUp(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	startManager(t, ns, managerOptions{})
	pool(t, ns, "prov", "192.168.0.10", "192.168.0.20", 24, "")
	template(t, ns, "tmpl", specOf(t, simpleTemplate))
	host(t, ns, "node-0", nil, nil, "", "eth0=52:54:00:00:00:01")
	c := machine(t, ns, "m3m-0", "tmpl", machineOpts{host: "node-0"})
	data := renderedData(t, ns, "m3m-0")
	g := NewWithT(t)

	g.Expect(env.Client.Delete(ctx, c)).To(Succeed())
	NewWithT(t).Eventually(func(g Gomega) {
		for _, o := range []client.Object{
			&infrav1.Metal3DataClaim{ObjectMeta: metav1.ObjectMeta{Name: "m3m-0"}},
			&infrav1.Metal3Data{ObjectMeta: metav1.ObjectMeta{Name: data.Name}},
			&ipamv1.IPClaim{ObjectMeta: metav1.ObjectMeta{Name: "tmpl-0-prov"}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: data.Spec.MetaData.Name}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: data.Spec.NetworkData.Name}},
		} {
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: o.GetName()}, o)
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%T %s should be gone: %v", o, o.GetName(), err)
		}
		addresses := &ipamv1.IPAddressList{}
		g.Expect(env.Client.List(ctx, addresses, client.InNamespace(ns))).To(Succeed())
		g.Expect(addresses.Items).To(BeEmpty())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	// The index and the address are free again.
	host(t, ns, "node-1", nil, nil, "", "eth0=52:54:00:00:00:02")
	m3m := &infrav1.Metal3Machine{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "m3m-0"}, m3m)).To(Succeed())
	machine(t, ns, "m3m-1", "tmpl", machineOpts{host: "node-1"})
	again := renderedData(t, ns, "m3m-1")
	g.Expect(again.Name).To(Equal("tmpl-0"))
	g.Expect(strings.Contains(string(getSecret(g, ns, again.Spec.MetaData.Name).Data["metaData"]), "ip: 192.168.0.10")).To(BeTrue())
}

// TestIPReuseKeysClaimsByHost: with IP reuse, the IPClaim is <host>-<pool>, and a host whose
// machine is replaced gets the same address back through the pool's preAllocations.
func TestIPReuseKeysClaimsByHost(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	startManager(t, ns, managerOptions{ipReuse: true})
	p := pool(t, ns, "prov", "192.168.0.10", "192.168.0.20", 24, "")
	g := NewWithT(t)
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
	p.Spec.PreAllocations = map[string]ipamv1.IPAddressStr{"node-7-prov": "192.168.0.17"}
	g.Expect(env.Client.Update(ctx, p)).To(Succeed())
	template(t, ns, "tmpl", specOf(t, simpleTemplate))
	host(t, ns, "node-7", nil, nil, "", "eth0=52:54:00:00:00:07")

	c := machine(t, ns, "m3m-0", "tmpl", machineOpts{host: "node-7"})
	data := renderedData(t, ns, "m3m-0")
	ipClaim := &ipamv1.IPClaim{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "node-7-prov"}, ipClaim)).To(Succeed())
	g.Expect(ipClaim.Labels).To(HaveKeyWithValue(ipamv1.DataNameLabel, data.Name))
	g.Expect(ipClaim.Labels).To(HaveKeyWithValue(ipamv1.PoolNameLabel, "prov"))
	g.Expect(string(getSecret(g, ns, data.Spec.MetaData.Name).Data["metaData"])).To(ContainSubstring("ip: 192.168.0.17"))

	// Replace the machine: the next one on the same host gets the same address.
	g.Expect(env.Client.Delete(ctx, c)).To(Succeed())
	NewWithT(t).Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "node-7-prov"}, &ipamv1.IPClaim{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	machine(t, ns, "m3m-1", "tmpl", machineOpts{host: "node-7"})
	again := renderedData(t, ns, "m3m-1")
	g.Expect(string(getSecret(g, ns, again.Spec.MetaData.Name).Data["metaData"])).To(ContainSubstring("ip: 192.168.0.17"))
}

// TestIPReuseSharesAnExistingHostClaim: with IP reuse, a <host>-<pool> claim made before the
// machine (by pre-provisioning) is shared, not replaced: the host renders with the address it
// already has, and when the machine goes the claim stays with its other owner.
func TestIPReuseSharesAnExistingHostClaim(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	startManager(t, ns, managerOptions{ipReuse: true})
	pool(t, ns, "prov", "192.168.0.10", "192.168.0.20", 24, "")
	template(t, ns, "tmpl", specOf(t, simpleTemplate))
	host(t, ns, "node-7", nil, nil, "", "eth0=52:54:00:00:00:07")
	g := NewWithT(t)

	// The pre-provisioning controller's claim, owned by its template (a ConfigMap stands in).
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "preprov-owner"}}
	g.Expect(env.Client.Create(ctx, other)).To(Succeed())
	pre := &ipamv1.IPClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "node-7-prov", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: other.Name, UID: other.UID,
		}}},
		Spec: ipamv1.IPClaimSpec{Pool: corev1.ObjectReference{Name: "prov"}},
	}
	g.Expect(env.Client.Create(ctx, pre)).To(Succeed())
	var address string
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pre), pre)).To(Succeed())
		g.Expect(pre.Status.Address).NotTo(BeNil())
		a := &ipamv1.IPAddress{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: pre.Status.Address.Name}, a)).To(Succeed())
		address = string(a.Spec.Address)
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	c := machine(t, ns, "m3m-0", "tmpl", machineOpts{host: "node-7"})
	data := renderedData(t, ns, "m3m-0")
	g.Expect(string(getSecret(g, ns, data.Spec.MetaData.Name).Data["metaData"])).To(ContainSubstring("ip: " + address))
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pre), pre)).To(Succeed())
	g.Expect(pre.OwnerReferences).To(HaveLen(2), "the Metal3Data shares the claim")

	g.Expect(env.Client.Delete(ctx, c)).To(Succeed())
	NewWithT(t).Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: data.Name}, &infrav1.Metal3Data{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pre), pre)).To(Succeed())
	g.Expect(pre.DeletionTimestamp.IsZero()).To(BeTrue(), "the claim stays with its other owner")
	g.Expect(pre.OwnerReferences).To(HaveLen(1))
	g.Expect(pre.OwnerReferences[0].UID).To(Equal(other.UID))
	g.Expect(pre.Status.Address).NotTo(BeNil())
}

// TestSecretRestoredByHandClearsTheError: a deleted Secret that could not be re-created (an input
// changed) and that someone then restored from a backup leaves no error behind: the Metal3Data's
// next reconcile (here woken by its host) finds every Secret there.
func TestSecretRestoredByHandClearsTheError(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	startManager(t, ns, managerOptions{})
	pool(t, ns, "prov", "192.168.0.10", "192.168.0.20", 24, "")
	template(t, ns, "tmpl", specOf(t, simpleTemplate))
	h := host(t, ns, "node-0", map[string]string{"example.com/rack": "r1"}, nil, "", "eth0=52:54:00:00:00:01")
	machine(t, ns, "m3m-0", "tmpl", machineOpts{host: "node-0"})
	data := renderedData(t, ns, "m3m-0")
	g := NewWithT(t)
	md := getSecret(g, ns, data.Spec.MetaData.Name)

	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(h), h)).To(Succeed())
	h.Labels["example.com/rack"] = "r9"
	g.Expect(env.Client.Update(ctx, h)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, md)).To(Succeed())
	NewWithT(t).Eventually(func(g Gomega) {
		d := getData(g, ns, data.Name)
		g.Expect(d.Status.ErrorMessage).To(gstruct.PointTo(ContainSubstring("rendering again gives different content")))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	backup := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: md.Name}, Data: md.Data}
	g.Expect(env.Client.Create(ctx, backup)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(h), h)).To(Succeed())
	h.Annotations = map[string]string{"example.com/restored": "metaData"}
	g.Expect(env.Client.Update(ctx, h)).To(Succeed())
	NewWithT(t).Eventually(func(g Gomega) {
		d := getData(g, ns, data.Name)
		g.Expect(d.Status.ErrorMessage).To(BeNil())
		g.Expect(d.Status.Ready).To(BeTrue())
		g.Expect(condition(d.Status.Conditions, infrav1.DataSecretsReadyCondition).Status).To(Equal(metav1.ConditionTrue))
		c := getClaim(g, ns, "m3m-0")
		g.Expect(c.Status.ErrorMessage).To(BeNil())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(getSecret(g, ns, md.Name).Data).To(Equal(md.Data), "the restored Secret is left as restored")
}
