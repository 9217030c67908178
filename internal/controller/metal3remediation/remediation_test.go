package metal3remediation

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

const (
	eventually = 30 * time.Second
	poll       = 100 * time.Millisecond
)

// fixture is one unhealthy machine: a Cluster, a Machine whose Metal3Machine runs on a host
// that is powered on, and (with a node name) the Machine's Node.
type fixture struct {
	ns      string
	machine *clusterv1.Machine
	host    string
	node    string
}

func newFixture(t *testing.T, node string) *fixture {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	f := &fixture{ns: ns, host: "host-0", node: node}

	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Cluster", Name: "c1",
		}},
	}
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())

	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1", Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}},
		Spec: clusterv1.MachineSpec{
			ClusterName: "c1",
			Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To("m1-bootstrap")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Machine", Name: "m1",
			},
		},
	}
	g.Expect(env.Client.Create(ctx, machine)).To(Succeed())
	if node != "" {
		machine.Status.NodeRef = clusterv1.MachineNodeReference{Name: node}
		g.Expect(env.Client.Status().Update(ctx, machine)).To(Succeed())
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:        node,
			Labels:      map[string]string{"kubernetes.io/hostname": node, "team": "storage"},
			Annotations: map[string]string{"example.com/rack": "r12"},
		}}
		g.Expect(env.Client.Create(ctx, n)).To(Succeed())
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), n) })
	}
	f.machine = machine

	m3m := &infrav1.Metal3Machine{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: "m1",
			Labels:      map[string]string{clusterv1.ClusterNameLabel: "c1"},
			Annotations: map[string]string{infrav1.HostAnnotation: ns + "/" + f.host},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: machine.Name, UID: machine.UID,
			}},
		},
		Spec: infrav1.Metal3MachineSpec{Image: infrav1.Image{URL: "http://images.example.com/ubuntu.qcow2", Checksum: ptr.To("0123456789abcdef")}},
	}
	g.Expect(env.Client.Create(ctx, m3m)).To(Succeed())

	// The host as BMO has it: provisioned, online and on, with fields we do not model.
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": bmov1.GroupVersion.String(),
		"kind":       "BareMetalHost",
		"metadata":   map[string]any{"name": f.host, "namespace": ns},
		"spec": map[string]any{
			"online":          true,
			"bootMACAddress":  "00:11:22:33:44:55",
			"bmc":             map[string]any{"address": "redfish://10.0.0.1/redfish/v1/Systems/1", "credentialsName": "bmc"},
			"rootDeviceHints": map[string]any{"deviceName": "/dev/sda"},
		},
	}}
	g.Expect(env.Client.Create(ctx, u)).To(Succeed())
	u.Object["status"] = map[string]any{
		"operationalStatus": "OK",
		"errorMessage":      "",
		"poweredOn":         true,
		"provisioning":      map[string]any{"state": string(bmov1.StateProvisioned), "bootMode": "UEFI"},
	}
	g.Expect(env.Client.Status().Update(ctx, u)).To(Succeed())
	return f
}

// remediate creates the Metal3Remediation a MachineHealthCheck would: named and owned as the
// Machine.
func (f *fixture) remediate(t *testing.T, retryLimit int32) *infrav1.Metal3Remediation {
	t.Helper()
	return f.remediateWith(t, retryLimit, NodeModeDelete)
}

// remediateWith is remediate for the test manager running the given node mode.
func (f *fixture) remediateWith(t *testing.T, retryLimit int32, mode NodeMode) *infrav1.Metal3Remediation {
	t.Helper()
	var labels map[string]string
	if mode != NodeModeDelete {
		labels = map[string]string{nodeModeLabel: string(mode)}
	}
	rem := &infrav1.Metal3Remediation{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: f.ns, Name: f.machine.Name, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: f.machine.Name, UID: f.machine.UID,
			}},
		},
		Spec: infrav1.Metal3RemediationSpec{Strategy: &infrav1.RemediationStrategy{
			Type: infrav1.RebootRemediationStrategy, RetryLimit: retryLimit, TimeoutSeconds: 300,
		}},
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), rem)).To(Succeed())
	return rem
}

func (f *fixture) getHost(g Gomega) *bmov1.BareMetalHost {
	h := &bmov1.BareMetalHost{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: f.host}, h)).To(Succeed())
	return h
}

func getRem(g Gomega, rem *infrav1.Metal3Remediation) *infrav1.Metal3Remediation {
	out := &infrav1.Metal3Remediation{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(rem), out)).To(Succeed())
	return out
}

// setPower plays BMO: the host's power state changes.
func (f *fixture) setPower(t *testing.T, on bool) {
	t.Helper()
	NewWithT(t).Eventually(func() error {
		h := &bmov1.BareMetalHost{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: f.host}, h); err != nil {
			return err
		}
		orig := h.DeepCopy()
		h.Status.PoweredOn = on
		return env.Client.Status().Patch(context.Background(), h, client.MergeFrom(orig))
	}, eventually, poll).Should(Succeed())
}

// rebootCycle waits for the remediation to ask for the power-off, powers the host off, waits for
// the request to be withdrawn, and powers it on: one reboot as BMO performs it.
func (f *fixture) rebootCycle(t *testing.T, rem *infrav1.Metal3Remediation) {
	t.Helper()
	g := NewWithT(t)
	key := rebootAnnotationPrefix + string(rem.UID)
	g.Eventually(func(g Gomega) {
		g.Expect(f.getHost(g).Annotations).To(HaveKeyWithValue(key, `{"mode":"hard"}`))
	}, eventually, poll).Should(Succeed(), "the host is asked to power off")
	f.setPower(t, false)
	g.Eventually(func(g Gomega) {
		g.Expect(f.getHost(g).Annotations).NotTo(HaveKey(key))
		g.Expect(getRem(g, rem).Status.Phase).To(Equal(infrav1.PhaseWaiting))
	}, eventually, poll).Should(Succeed(), "once off, the host is asked to power on again")
	f.setPower(t, true)
}

// TestRebootDeletesAndRestoresTheNode: a remediation powers the host off through BMO's reboot
// annotation, deletes the Node only once the host is off, powers the host on again, and puts
// the Node's labels and annotations back on the Node the kubelet registers after the reboot.
func TestRebootDeletesAndRestoresTheNode(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t, "node-restore")
	rem := f.remediate(t, 1)

	key := rebootAnnotationPrefix + string(rem.UID)
	g.Eventually(func(g Gomega) {
		g.Expect(f.getHost(g).Annotations).To(HaveKey(key))
		got := getRem(g, rem)
		g.Expect(got.Status.Phase).To(Equal(infrav1.PhaseRunning))
		g.Expect(got.Finalizers).To(ContainElement(infrav1.RemediationFinalizer))
		g.Expect(got.Status.LastRemediated).NotTo(BeNil())
	}, eventually, poll).Should(Succeed())
	// The host is still on: its Node stays, or its workloads could run twice.
	g.Consistently(func() error {
		return env.Client.Get(ctx, client.ObjectKey{Name: f.node}, &corev1.Node{})
	}, time.Second, poll).Should(Succeed())

	f.setPower(t, false)
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: f.node}, &corev1.Node{}))
	}, eventually, poll).Should(BeTrue(), "the Node is deleted once the host is off")
	g.Eventually(func(g Gomega) {
		g.Expect(f.getHost(g).Annotations).NotTo(HaveKey(key))
		got := getRem(g, rem)
		g.Expect(got.Status.Phase).To(Equal(infrav1.PhaseWaiting))
		g.Expect(got.Annotations).To(HaveKey(nodeLabelsBackup))
	}, eventually, poll).Should(Succeed())

	// BMO powers the host on; the kubelet registers a fresh Node.
	f.setPower(t, true)
	fresh := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: f.node, Labels: map[string]string{"kubernetes.io/hostname": f.node}}}
	g.Expect(env.Client.Create(ctx, fresh)).To(Succeed())

	g.Eventually(func(g Gomega) {
		n := &corev1.Node{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: f.node}, n)).To(Succeed())
		g.Expect(n.Labels).To(HaveKeyWithValue("team", "storage"))
		g.Expect(n.Annotations).To(HaveKeyWithValue("example.com/rack", "r12"))
		got := getRem(g, rem)
		g.Expect(got.Finalizers).NotTo(ContainElement(infrav1.RemediationFinalizer))
		g.Expect(got.Annotations).NotTo(HaveKey(nodeLabelsBackup))
		c := conditions.Get(got, infrav1.RemediationProgressingCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.RemediationDoneReason))
	}, eventually, poll).Should(Succeed())
	g.Expect(f.getHost(g).Annotations).NotTo(HaveKey(infrav1.UnhealthyAnnotation))

	// The MachineHealthCheck deletes the remediation once the Machine is healthy: it goes.
	g.Expect(env.Client.Delete(ctx, rem)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(rem), &infrav1.Metal3Remediation{}))
	}, eventually, poll).Should(BeTrue())
}

// TestRetriesThenGivesUp: with retryLimit 2, the host is rebooted three times, each after
// timeoutSeconds without recovery; then the host is marked unhealthy (so no machine picks it
// again) and the Machine's OwnerRemediated condition is set False, which makes its MachineSet
// or control plane delete and replace it.
func TestRetriesThenGivesUp(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t, "")
	rem := f.remediate(t, 2)

	for attempt := range int32(3) {
		f.rebootCycle(t, rem)
		g.Expect(getRem(g, rem).Status.RetryCount).To(Equal(attempt))
		// Not yet timeoutSeconds after the reboot: no retry.
		clock.Advance(250 * time.Second)
		g.Consistently(func(g Gomega) {
			got := getRem(g, rem)
			g.Expect(got.Status.RetryCount).To(Equal(attempt))
			g.Expect(got.Status.Phase).To(Equal(infrav1.PhaseWaiting))
		}, time.Second, poll).Should(Succeed())
		clock.Advance(60 * time.Second)
		if attempt < 2 {
			g.Eventually(func(g Gomega) {
				g.Expect(getRem(g, rem).Status.RetryCount).To(Equal(attempt + 1))
			}, eventually, poll).Should(Succeed(), "retry %d starts once timeoutSeconds have passed", attempt+1)
		}
	}

	g.Eventually(func(g Gomega) {
		got := getRem(g, rem)
		g.Expect(got.Status.Phase).To(Equal(infrav1.PhaseDeleting))
		g.Expect(got.Status.RetryCount).To(Equal(int32(2)))
	}, eventually, poll).Should(Succeed())
	host := f.getHost(g)
	g.Expect(host.Annotations).To(HaveKeyWithValue(infrav1.UnhealthyAnnotation, infrav1.RemediationUnhealthyValue))
	g.Expect(host.Spec.Online).To(BeTrue(), "BMO's fields are left alone")
	g.Expect(host.Spec.BootMACAddress).To(Equal("00:11:22:33:44:55"))

	machine := &clusterv1.Machine{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(f.machine), machine)).To(Succeed())
	c := conditions.Get(machine, clusterv1.MachineOwnerRemediatedCondition)
	g.Expect(c).NotTo(BeNil())
	g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(c.Reason).To(Equal(clusterv1.MachineOwnerRemediatedWaitingForRemediationReason))

	// Given up: nothing more happens, and nothing holds the remediation back.
	got := getRem(g, rem)
	g.Expect(got.Finalizers).To(BeEmpty())
	g.Expect(f.getHost(g).Annotations).NotTo(HaveKey(rebootAnnotationPrefix + string(rem.UID)))
}

// TestOfflineHostIsNotRebooted: a host someone powered off on purpose (spec.online false) is
// left alone, and the remediation says why.
func TestOfflineHostIsNotRebooted(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(t, "")
	h := f.getHost(g)
	orig := h.DeepCopy()
	h.Spec.Online = false
	g.Expect(env.Client.Patch(context.Background(), h, client.MergeFrom(orig))).To(Succeed())
	rem := f.remediate(t, 1)
	g.Eventually(func(g Gomega) {
		got := getRem(g, rem)
		g.Expect(got.Status.Phase).To(Equal(infrav1.PhaseFailed))
		c := conditions.Get(got, infrav1.RemediationProgressingCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.RemediationHostOfflineReason))
		g.Expect(c.Message).To(ContainSubstring("spec.online"))
	}, eventually, poll).Should(Succeed())
	g.Expect(f.getHost(g).Annotations).To(BeEmpty())
}
