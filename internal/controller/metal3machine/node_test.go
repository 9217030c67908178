package metal3machine

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/testenv"
)

// With cloudProviderEnabled unset (false, as upstream defaults it), the controller sets
// providerID on the workload cluster's Node, found by its metal3.io/uuid label, reaching the
// workload cluster (a second API server) through the <cluster>-kubeconfig Secret as Cluster API
// writes it. A Metal3Cluster written for CAPM3 without the field therefore gets its Nodes matched.
func TestNodeProviderIDWithCloudProviderUnset(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	workload, err := testenv.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = workload.Stop() })

	ns := newNamespace(t)
	cluster := createCluster(t, ns, "wl", clusterOpts{})
	g.Expect(env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wl-kubeconfig"},
		Data:       map[string][]byte{"value": workload.KubeConfig},
	})).To(Succeed())
	host := createHost(t, ns, "h1", nil, bmov1.StateAvailable)
	m3m := createMachine(t, cluster, "m1", machineOpts{bootstrap: "b"})
	g.Eventually(func(g Gomega) {
		g.Expect(getM3M(g, m3m).Annotations).To(HaveKey(infrav1.HostAnnotation))
	}, eventually, poll).Should(Succeed())

	// A Node of another host, and (later) this host's Node, in the workload cluster.
	other := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "other", Labels: map[string]string{NodeUUIDLabel: "not-this-host"}}}
	g.Expect(workload.Client.Create(ctx, other)).To(Succeed())

	setHostState(t, ns, "h1", bmov1.StateProvisioned)
	g.Eventually(func(g Gomega) {
		c := condition(getM3M(g, m3m), infrav1.KubernetesNodeReadyCondition)
		g.Expect(c.Reason).To(Equal(WaitingForNodeReason))
		g.Expect(c.Message).To(ContainSubstring("waiting for a Node labelled metal3.io/uuid=" + string(host.UID)))
	}, eventually, poll).Should(Succeed())

	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{NodeUUIDLabel: string(host.UID)}}}
	g.Expect(workload.Client.Create(ctx, node)).To(Succeed())
	g.Eventually(func(g Gomega) {
		got := &corev1.Node{}
		g.Expect(workload.Client.Get(ctx, client.ObjectKeyFromObject(node), got)).To(Succeed())
		g.Expect(got.Spec.ProviderID).To(Equal("metal3://" + ns + "/h1/m1"))
		g.Expect(condition(getM3M(g, m3m), infrav1.KubernetesNodeReadyCondition).Status).To(Equal(metav1.ConditionTrue))
	}, eventually, poll).Should(Succeed())

	got := &corev1.Node{}
	g.Expect(workload.Client.Get(ctx, client.ObjectKeyFromObject(other), got)).To(Succeed())
	g.Expect(got.Spec.ProviderID).To(BeEmpty(), "another host's Node is left alone")
}

// With the cloud provider enabled the Nodes are the cloud provider's business.
func TestNodeLeftAloneWithCloudProvider(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	cluster := createCluster(t, ns, "c1", clusterOpts{cloudProviderEnabled: ptr.To(true)})
	createHost(t, ns, "h1", nil, bmov1.StateAvailable)
	m3m := createMachine(t, cluster, "m1", machineOpts{bootstrap: "b"})
	g.Eventually(func(g Gomega) {
		g.Expect(getM3M(g, m3m).Annotations).To(HaveKey(infrav1.HostAnnotation))
	}, eventually, poll).Should(Succeed())
	setHostState(t, ns, "h1", bmov1.StateProvisioned)
	g.Eventually(func(g Gomega) {
		g.Expect(getM3M(g, m3m).Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
	}, eventually, poll).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(condition(getM3M(g, m3m), infrav1.KubernetesNodeReadyCondition).Type).To(BeEmpty())
	}, "500ms", poll).Should(Succeed())
}
