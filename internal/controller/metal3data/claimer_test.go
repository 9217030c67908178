package metal3data_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/metal3dataclaim"
)

// TestClaimerServesTheMachineController: the machine controller's side — Claim makes the claim
// named after the Metal3Machine and returns the Secrets once rendered; Release deletes it and
// reports done once everything is gone.
func TestClaimerServesTheMachineController(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	mgr := startManager(t, ns, managerOptions{})
	pool(t, ns, "prov", "192.168.0.10", "192.168.0.20", 24, "")
	template(t, ns, "tmpl", specOf(t, simpleTemplate))
	host(t, ns, "node-0", nil, nil, "", "eth0=52:54:00:00:00:01")
	g := NewWithT(t)
	m3m := &infrav1.Metal3Machine{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: "worker-0",
			Labels:      map[string]string{clusterv1.ClusterNameLabel: "cluster-a"},
			Annotations: map[string]string{infrav1.HostAnnotation: ns + "/node-0"},
		},
		Spec: infrav1.Metal3MachineSpec{
			Image:        infrav1.Image{URL: "http://images.example.com/ubuntu.qcow2", Checksum: ptr.To("0123456789abcdef")},
			DataTemplate: &corev1.ObjectReference{Name: "tmpl"},
		},
	}
	g.Expect(env.Client.Create(ctx, m3m)).To(Succeed())

	// The machine controller's claimer reads through its manager's cache and indexes.
	claimer := &metal3dataclaim.Claimer{Client: mgr.client}
	rendered, err := claimer.Claim(ctx, m3m)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rendered).To(BeNil())
	c := getClaim(g, ns, "worker-0")
	g.Expect(c.Spec.Template.Name).To(Equal("tmpl"))
	g.Expect(metav1.GetControllerOf(c).UID).To(Equal(m3m.UID))
	g.Expect(c.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "cluster-a"))

	g.Eventually(func(g Gomega) {
		rendered, err = claimer.Claim(ctx, m3m)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(rendered).NotTo(BeNil())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(rendered.Metal3Data.Name).To(Equal("tmpl-0"))
	g.Expect(rendered.MetaData).To(Equal(&corev1.SecretReference{Name: "worker-0-metadata-0", Namespace: ns}))
	g.Expect(rendered.NetworkData).To(Equal(&corev1.SecretReference{Name: "worker-0-networkdata-0", Namespace: ns}))

	done, err := claimer.Release(ctx, m3m)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeFalse(), "the claim waits for its Metal3Data to go")
	g.Eventually(func(g Gomega) {
		done, err := claimer.Release(ctx, m3m)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(done).To(BeTrue())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}
