package metal3data_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/cachepolicy"
	"github.com/metalwire/metalwire/internal/controller/metal3data"
)

// TestRenderedSecretsHeldAsMetadataOnly: the Secrets a Metal3Data renders carry our label, and
// the manager holds only their metadata (names, owner, digest), never their data: its Secret
// cache, which still holds the other Secrets with BMO's label, does not have them.
func TestRenderedSecretsHeldAsMetadataOnly(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	m := startManager(t, ns, managerOptions{})
	pool(t, ns, "prov", "192.168.0.10", "192.168.0.20", 24, "")
	template(t, ns, "tmpl", specOf(t, simpleTemplate))
	host(t, ns, "node-0", map[string]string{"example.com/rack": "r1"}, nil, "", "eth0=52:54:00:00:00:01")
	machine(t, ns, "m3m-0", "tmpl", machineOpts{host: "node-0"})
	data := renderedData(t, ns, "m3m-0")
	g := NewWithT(t)

	// A BMO-labelled Secret that is not rendered (a BMC's credentials): the Secret cache holds it.
	bmc := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "node-0-bmc", Labels: map[string]string{infrav1.BMOEnvironmentLabel: infrav1.BMOEnvironmentLabelValue}},
		Data:       map[string][]byte{"username": []byte("admin"), "password": []byte("secret")},
	}
	g.Expect(env.Client.Create(ctx, bmc)).To(Succeed())
	g.Eventually(func() error {
		return m.cache.Get(ctx, client.ObjectKeyFromObject(bmc), &corev1.Secret{})
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed(), "the manager's Secret cache holds BMO-labelled Secrets")

	for _, name := range []string{data.Spec.MetaData.Name, data.Spec.NetworkData.Name} {
		key := client.ObjectKey{Namespace: ns, Name: name}
		s := getSecret(g, ns, name)
		g.Expect(s.Labels).To(HaveKeyWithValue(infrav1.DataSecretRenderedLabel, infrav1.DataSecretRenderedLabelValue))
		g.Expect(s.Labels).To(HaveKeyWithValue(infrav1.BMOEnvironmentLabel, infrav1.BMOEnvironmentLabelValue), "BMO's cache selects it")

		err := m.cache.Get(ctx, key, &corev1.Secret{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the manager's Secret cache holds rendered Secret %s (%v): its data would be in memory", name, err)

		meta := cachepolicy.RenderedSecret()
		g.Expect(m.rendered.Get(ctx, key, meta)).To(Succeed(), "the rendered-Secret cache has %s", name)
		g.Expect(meta.Annotations).To(HaveKeyWithValue(metal3data.RenderedHashAnnotation, s.Annotations[metal3data.RenderedHashAnnotation]))
		g.Expect(metav1.GetControllerOf(meta).UID).To(Equal(data.UID))
	}
	// And only them: not the BMC's Secret.
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	g.Expect(m.rendered.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	var names []string
	for _, item := range list.Items {
		names = append(names, item.Name)
	}
	g.Expect(names).To(ConsistOf(data.Spec.MetaData.Name, data.Spec.NetworkData.Name))
}

// TestSecretsOfAnEarlierVersionKeepWorking: Secrets rendered before metalwire labelled them as
// rendered (in the manager's Secret cache, not the rendered one) are still known to exist; a
// deleted one is put back, and the survivor gets the label as it is written again.
func TestSecretsOfAnEarlierVersionKeepWorking(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	startManager(t, ns, managerOptions{})
	pool(t, ns, "prov", "192.168.0.10", "192.168.0.20", 24, "")
	template(t, ns, "tmpl", specOf(t, simpleTemplate))
	host(t, ns, "node-0", map[string]string{"example.com/rack": "r1"}, nil, "", "eth0=52:54:00:00:00:01")
	machine(t, ns, "m3m-0", "tmpl", machineOpts{host: "node-0"})
	data := renderedData(t, ns, "m3m-0")
	g := NewWithT(t)

	// As an earlier version wrote them: without our label.
	var md, nd *corev1.Secret
	for _, p := range []**corev1.Secret{&md, &nd} {
		name := data.Spec.MetaData.Name
		if p == &nd {
			name = data.Spec.NetworkData.Name
		}
		s := getSecret(g, ns, name)
		delete(s.Labels, infrav1.DataSecretRenderedLabel)
		g.Expect(env.Client.Update(ctx, s)).To(Succeed())
		*p = s
	}

	g.Expect(env.Client.Delete(ctx, md)).To(Succeed())
	NewWithT(t).Eventually(func(g Gomega) {
		again := getSecret(g, ns, md.Name)
		g.Expect(again.UID).NotTo(Equal(md.UID))
		g.Expect(again.Data).To(Equal(md.Data))
		g.Expect(again.Labels).To(HaveKeyWithValue(infrav1.DataSecretRenderedLabel, infrav1.DataSecretRenderedLabelValue))
		survivor := getSecret(g, ns, nd.Name)
		g.Expect(survivor.UID).To(Equal(nd.UID))
		g.Expect(survivor.Data).To(Equal(nd.Data))
		g.Expect(survivor.Labels).To(HaveKeyWithValue(infrav1.DataSecretRenderedLabel, infrav1.DataSecretRenderedLabelValue), "labelled as it is written again")
		g.Expect(getData(g, ns, data.Name).Status.ErrorMessage).To(BeNil())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}
