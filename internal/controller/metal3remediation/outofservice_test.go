package metal3remediation

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// getNode reads a Node of the workload cluster (the test API server).
func getNode(g Gomega, name string) *corev1.Node {
	n := &corev1.Node{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: name}, n)).To(Succeed())
	return n
}

func outOfServiceTaintOf(n *corev1.Node) *corev1.Taint {
	for i := range n.Spec.Taints {
		if n.Spec.Taints[i].Key == corev1.TaintNodeOutOfService {
			return &n.Spec.Taints[i]
		}
	}
	return nil
}

// terminatingPod creates a pod bound to the Node and deletes it: with no kubelet to confirm, it
// stays terminating, as the pods of a Node whose host stopped answering do.
func terminatingPod(t *testing.T, ns, node, name string) *corev1.Pod {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	pod := runningPod(t, ns, node, name)
	g.Expect(env.Client.Delete(ctx, pod)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed(), "a pod bound to a Node stays until its kubelet (or the pod GC) removes it")
	g.Expect(pod.DeletionTimestamp).NotTo(BeNil())
	return pod
}

// runningPod creates a pod bound to the Node.
func runningPod(t *testing.T, ns, node, name string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{
			NodeName:                     node,
			AutomountServiceAccountToken: ptr.To(false),
			Containers:                   []corev1.Container{{Name: "app", Image: "registry.example.com/app:1"}},
		},
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), pod)).To(Succeed())
	t.Cleanup(func() { forceDelete(pod) })
	return pod
}

// forceDelete removes a pod at once, as the pod garbage collector does for the terminating pods
// of an out-of-service Node.
func forceDelete(pod *corev1.Pod) {
	_ = client.IgnoreNotFound(env.Client.Delete(context.Background(), pod, client.GracePeriodSeconds(0)))
}

// attachVolume records a volume attached to the Node, as a CSI driver's attacher does.
func attachVolume(t *testing.T, node string) *storagev1.VolumeAttachment {
	t.Helper()
	va := &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: "va-" + node},
		Spec: storagev1.VolumeAttachmentSpec{
			Attacher: "csi.example.com",
			NodeName: node,
			Source:   storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pv-" + node)},
		},
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), va)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), va) })
	return va
}

func progressingOf(g Gomega, rem *infrav1.Metal3Remediation) metav1.Condition {
	c := conditions.Get(getRem(g, rem), infrav1.RemediationProgressingCondition)
	g.Expect(c).NotTo(BeNil())
	return *c
}

// TestTaintModeKeepsTheNode: with the taint mode (upstream's on Kubernetes 1.28 and later), the
// Node of a remediated machine is not deleted: once the host is off it is tainted
// node.kubernetes.io/out-of-service:NoExecute, the host stays off until the Node's terminating
// pods and its volumes are gone, and once the host is on again the taint goes; the Node is the
// same object throughout, with its labels, and nothing is kept on the remediation.
func TestTaintModeKeepsTheNode(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t, "node-taint")
	nodeUID := getNode(g, f.node).UID
	stuck := terminatingPod(t, f.ns, f.node, "db-0")
	runningPod(t, f.ns, f.node, "node-exporter") // not being deleted: does not hold the reboot back
	volume := attachVolume(t, f.node)

	rem := f.remediateWith(t, 1, NodeModeTaint)
	key := rebootAnnotationPrefix + string(rem.UID)
	g.Eventually(func(g Gomega) {
		g.Expect(f.getHost(g).Annotations).To(HaveKey(key))
	}, eventually, poll).Should(Succeed(), "the host is asked to power off")
	g.Consistently(func(g Gomega) {
		g.Expect(outOfServiceTaintOf(getNode(g, f.node))).To(BeNil())
	}, time.Second, poll).Should(Succeed(), "no taint while the host still runs")

	f.setPower(t, false)
	g.Eventually(func(g Gomega) {
		taint := outOfServiceTaintOf(getNode(g, f.node))
		g.Expect(taint).NotTo(BeNil())
		g.Expect(taint.Effect).To(Equal(corev1.TaintEffectNoExecute))
		g.Expect(taint.Value).To(Equal("nodeshutdown"))
		g.Expect(taint.TimeAdded).NotTo(BeNil())
		c := progressingOf(g, rem)
		g.Expect(c.Reason).To(Equal(infrav1.RemediationDrainingNodeReason))
		g.Expect(c.Message).To(ContainSubstring("pod " + f.ns + "/db-0 (terminating)"))
	}, eventually, poll).Should(Succeed(), "once the host is off its Node is tainted, not deleted")

	// The pod is still terminating: the host stays off.
	g.Consistently(func(g Gomega) {
		g.Expect(f.getHost(g).Annotations).To(HaveKey(key))
		g.Expect(getRem(g, rem).Status.Phase).To(Equal(infrav1.PhaseRunning))
	}, 2*time.Second, poll).Should(Succeed())

	// The pod GC removes the terminating pod of the out-of-service Node; its volume is still
	// attached.
	forceDelete(stuck)
	g.Eventually(func(g Gomega) {
		g.Expect(progressingOf(g, rem).Message).To(ContainSubstring("VolumeAttachment " + volume.Name))
	}, eventually, poll).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(f.getHost(g).Annotations).To(HaveKey(key))
	}, time.Second, poll).Should(Succeed(), "the host stays off while a volume is attached to its Node")

	// The attach-detach controller detaches the volume: the host is powered on.
	g.Expect(env.Client.Delete(ctx, volume)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(f.getHost(g).Annotations).NotTo(HaveKey(key))
		g.Expect(getRem(g, rem).Status.Phase).To(Equal(infrav1.PhaseWaiting))
	}, eventually, poll).Should(Succeed(), "drained: the host is asked to power on")
	g.Expect(outOfServiceTaintOf(getNode(g, f.node))).NotTo(BeNil(), "the taint stays until the host is on")

	f.setPower(t, true)
	g.Eventually(func(g Gomega) {
		n := getNode(g, f.node)
		g.Expect(outOfServiceTaintOf(n)).To(BeNil())
		g.Expect(n.UID).To(Equal(nodeUID), "the Node was never deleted")
		g.Expect(n.Labels).To(HaveKeyWithValue("team", "storage"))
		got := getRem(g, rem)
		g.Expect(got.Finalizers).NotTo(ContainElement(infrav1.RemediationFinalizer))
		g.Expect(got.Annotations).NotTo(HaveKey(nodeLabelsBackup))
		g.Expect(got.Annotations).NotTo(HaveKey(nodeAnnotationsBackup))
		g.Expect(progressingOf(g, rem).Reason).To(Equal(infrav1.RemediationDoneReason))
	}, eventually, poll).Should(Succeed(), "the host is on: the taint goes")

	g.Expect(env.Client.Delete(ctx, rem)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(rem), &infrav1.Metal3Remediation{}))
	}, eventually, poll).Should(BeTrue())
}

// TestTaintModeRemediationDeletedHalfWay: a remediation deleted while its host is off and its
// Node tainted (the Machine recovered, or a person gave up) powers the host on and takes the
// taint away, so the Node does not stay out of service.
func TestTaintModeRemediationDeletedHalfWay(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t, "node-taint-deleted")
	terminatingPod(t, f.ns, f.node, "db-0")
	rem := f.remediateWith(t, 1, NodeModeTaint)
	key := rebootAnnotationPrefix + string(rem.UID)
	g.Eventually(func(g Gomega) {
		g.Expect(f.getHost(g).Annotations).To(HaveKey(key))
	}, eventually, poll).Should(Succeed())
	f.setPower(t, false)
	g.Eventually(func(g Gomega) {
		g.Expect(outOfServiceTaintOf(getNode(g, f.node))).NotTo(BeNil())
	}, eventually, poll).Should(Succeed())

	g.Expect(env.Client.Delete(ctx, rem)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(rem), &infrav1.Metal3Remediation{}))).To(BeTrue())
		g.Expect(f.getHost(g).Annotations).NotTo(HaveKey(key))
		g.Expect(outOfServiceTaintOf(getNode(g, f.node))).To(BeNil())
	}, eventually, poll).Should(Succeed())
}

// Upstream turns the taint mode on from Kubernetes 1.28, where the out-of-service taint is GA.
func TestOutOfServiceTaintSupported(t *testing.T) {
	tests := []struct {
		major, minor string
		want         bool
		wantErr      bool
	}{
		{major: "1", minor: "27", want: false},
		{major: "1", minor: "28", want: true},
		{major: "1", minor: "36", want: true},
		{major: "1", minor: "27+", want: false},
		{major: "1", minor: "29+", want: true}, // as EKS and GKE report theirs
		{major: "2", minor: "0", want: true},
		{major: "one", minor: "28", wantErr: true},
		{major: "1", minor: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.major+"."+tt.minor, func(t *testing.T) {
			g := NewWithT(t)
			got, err := OutOfServiceTaintSupported(&version.Info{Major: tt.major, Minor: tt.minor})
			if tt.wantErr {
				g.Expect(err).To(HaveOccurred())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

// The auto mode asks the management cluster's API server, as upstream does (not the workload
// cluster's): the test API server is Kubernetes 1.36, so auto taints. An API server that does
// not answer is an error that says how to choose the mode by hand, not a silent fall-back.
func TestAutoModeAsksTheManagementCluster(t *testing.T) {
	g := NewWithT(t)
	taint, v, err := useOutOfServiceTaint(NodeModeAuto, env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(v).To(MatchRegexp(`^1\.\d+`), "major.minor")
	g.Expect(taint).To(BeTrue())

	for mode, want := range map[NodeMode]bool{NodeModeTaint: true, NodeModeDelete: false} {
		got, _, err := useOutOfServiceTaint(mode, &rest.Config{Host: "https://127.0.0.1:1"})
		g.Expect(err).NotTo(HaveOccurred(), "an explicit mode asks nobody")
		g.Expect(got).To(Equal(want))
	}

	_, _, err = useOutOfServiceTaint(NodeModeAuto, &rest.Config{Host: "https://127.0.0.1:1", Timeout: 5 * time.Second})
	g.Expect(err).To(MatchError(ContainSubstring("--remediation-node-mode=taint or delete")))

	_, err = ParseNodeMode("cordon")
	g.Expect(err).To(MatchError(`unknown remediation node mode "cordon"; choose auto, taint or delete`))
}
