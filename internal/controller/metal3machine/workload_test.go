package metal3machine

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/testenv"
)

// The workload cluster is reached through Cluster API's ClusterCache: while it cannot connect
// (here the kubeconfig names a port nothing listens on) the machine says it is waiting for the
// workload cluster; once the Secret is right it connects, and from then on the one connection
// serves every reconcile, so the Secret is not read again: a second machine's Node gets its
// providerID after the Secret is gone, which a client made per reconcile could not do.
func TestNodeProviderIDThroughClusterCache(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	workload, err := testenv.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = workload.Stop() })

	ns := newNamespace(t)
	kubeconfig := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wl-kubeconfig"},
		Data:       map[string][]byte{"value": kubeconfigWithServer(t, workload.KubeConfig, "https://127.0.0.1:1")},
	}
	g.Expect(env.Client.Create(ctx, kubeconfig)).To(Succeed())
	cluster := createCluster(t, ns, "wl", clusterOpts{cloudProviderEnabled: ptr.To(false)})
	h1 := createHost(t, ns, "h1", nil, bmov1.StateAvailable)
	m1 := createMachine(t, cluster, "m1", machineOpts{bootstrap: "b"})
	g.Eventually(func(g Gomega) {
		g.Expect(getM3M(g, m1).Annotations).To(HaveKeyWithValue(infrav1.HostAnnotation, ns+"/h1"))
	}, eventually, poll).Should(Succeed())
	setHostState(t, ns, "h1", bmov1.StateProvisioned)

	g.Eventually(func(g Gomega) {
		c := condition(getM3M(g, m1), infrav1.KubernetesNodeReadyCondition)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(WaitingForWorkloadClusterReason))
		g.Expect(c.Message).To(ContainSubstring("waiting for a connection to workload cluster wl"))
		g.Expect(c.Message).To(ContainSubstring("Secret wl-kubeconfig"))
	}, eventually, poll).Should(Succeed())

	// The Secret fixed: the ClusterCache connects and the machine finds its Node.
	kubeconfig.Data["value"] = workload.KubeConfig
	g.Expect(env.Client.Update(ctx, kubeconfig)).To(Succeed())
	n1 := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{NodeUUIDLabel: string(h1.UID)}}}
	g.Expect(workload.Client.Create(ctx, n1)).To(Succeed())
	g.Eventually(func(g Gomega) {
		got := &corev1.Node{}
		g.Expect(workload.Client.Get(ctx, client.ObjectKeyFromObject(n1), got)).To(Succeed())
		g.Expect(got.Spec.ProviderID).To(Equal("metal3://" + ns + "/h1/m1"))
		g.Expect(condition(getM3M(g, m1), infrav1.KubernetesNodeReadyCondition).Status).To(Equal(metav1.ConditionTrue))
	}, eventually, poll).Should(Succeed())

	// The Secret gone: the connection made from it still serves.
	g.Expect(env.Client.Delete(ctx, kubeconfig)).To(Succeed())
	h2 := createHost(t, ns, "h2", nil, bmov1.StateAvailable)
	m2 := createMachine(t, cluster, "m2", machineOpts{bootstrap: "b"})
	g.Eventually(func(g Gomega) {
		g.Expect(getM3M(g, m2).Annotations).To(HaveKeyWithValue(infrav1.HostAnnotation, ns+"/h2"))
	}, eventually, poll).Should(Succeed())
	setHostState(t, ns, "h2", bmov1.StateProvisioned)
	n2 := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-2", Labels: map[string]string{NodeUUIDLabel: string(h2.UID)}}}
	g.Expect(workload.Client.Create(ctx, n2)).To(Succeed())
	g.Eventually(func(g Gomega) {
		got := &corev1.Node{}
		g.Expect(workload.Client.Get(ctx, client.ObjectKeyFromObject(n2), got)).To(Succeed())
		g.Expect(got.Spec.ProviderID).To(Equal("metal3://" + ns + "/h2/m2"))
	}, eventually, poll).Should(Succeed())
}

// kubeconfigWithServer is kubeconfig with every cluster's server replaced.
func kubeconfigWithServer(t *testing.T, kubeconfig []byte, server string) []byte {
	t.Helper()
	g := NewWithT(t)
	cfg, err := clientcmd.Load(kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	for _, c := range cfg.Clusters {
		c.Server = server
	}
	out, err := clientcmd.Write(*cfg)
	g.Expect(err).NotTo(HaveOccurred())
	return out
}
