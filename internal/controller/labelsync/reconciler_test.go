package labelsync_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/labelsync"
	workloadclient "github.com/metalwire/metalwire/internal/controller/workload"
	"github.com/metalwire/metalwire/internal/manager/managertest"
	"github.com/metalwire/metalwire/internal/testenv"
)

// env is the management cluster; workload is a second API server standing in for a workload
// cluster, reached through the <cluster>-kubeconfig Secret as in production.
var env, workload *testenv.Env

const (
	eventually = 20 * time.Second
	poll       = 100 * time.Millisecond
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	var err error
	if env, err = testenv.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if workload, err = testenv.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = workload.Stop() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The image's manager (managertest), with this package's reconciler alone.
	mgr, err := managertest.Build(ctx, env, "", nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	r := &labelsync.Reconciler{
		Client:         mgr.GetClient(),
		Recorder:       mgr.GetEventRecorder(labelsync.ControllerName),
		WorkloadClient: workloadclient.FromKubeconfigSecret(mgr.GetAPIReader()),
		Resync:         time.Second,
	}
	if err := r.SetupWithManager(ctx, mgr, 2); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return testenv.RunWithManagers(m, cancel, done)
}

// createProvisioned makes what Cluster API and metalwire leave for one running machine: a
// Cluster and Metal3Cluster (with prefixes, if any), the kubeconfig Secret, a Machine with a
// nodeRef, its Metal3Machine, the host it claimed, and the Node in the workload cluster.
func createProvisioned(t *testing.T, ns, prefixes string, hostLabels, nodeLabels map[string]string) (*bmov1.BareMetalHost, *corev1.Node) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
		Spec: clusterv1.ClusterSpec{
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Cluster", Name: "c1"},
		},
	}
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
	m3c := &infrav1.Metal3Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1", Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}},
		Spec:       infrav1.Metal3ClusterSpec{ControlPlaneEndpoint: infrav1.APIEndpoint{Host: "192.168.111.249", Port: 6443}},
	}
	if prefixes != "" {
		m3c.Annotations = map[string]string{labelsync.PrefixAnnotation: prefixes}
	}
	g.Expect(env.Client.Create(ctx, m3c)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1-kubeconfig", Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}},
		Data:       map[string][]byte{"value": workload.KubeConfig},
	})).To(Succeed())

	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-node", Labels: nodeLabels}}
	g.Expect(workload.Client.Create(ctx, node)).To(Succeed())
	t.Cleanup(func() { _ = workload.Client.Delete(context.Background(), node) })

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
	host := &bmov1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "h1", Labels: hostLabels},
		Spec: bmov1.BareMetalHostSpec{Online: true, ConsumerRef: &corev1.ObjectReference{
			APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3Machine", Namespace: ns, Name: "m1",
		}},
	}
	g.Expect(env.Client.Create(ctx, host)).To(Succeed())
	m3m := &infrav1.Metal3Machine{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: "m1",
			Labels:      map[string]string{clusterv1.ClusterNameLabel: "c1"},
			Annotations: map[string]string{infrav1.HostAnnotation: ns + "/h1"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: "m1", UID: machine.UID,
			}},
		},
		Spec: infrav1.Metal3MachineSpec{Image: infrav1.Image{URL: "http://images.example.com/u.qcow2", Checksum: ptr.To("abc")}},
	}
	g.Expect(env.Client.Create(ctx, m3m)).To(Succeed())
	// Cluster API records the Node once it has matched it by providerID.
	machine.Status.NodeRef = clusterv1.MachineNodeReference{Name: node.Name}
	g.Expect(env.Client.Status().Update(ctx, machine)).To(Succeed())
	return host, node
}

func nodeLabels(g Gomega, node *corev1.Node) map[string]string {
	got := &corev1.Node{}
	g.Expect(workload.Client.Get(context.Background(), client.ObjectKeyFromObject(node), got)).To(Succeed())
	return got.Labels
}

func patchHostLabels(g Gomega, host *bmov1.BareMetalHost, patch string) {
	g.Expect(env.Client.Patch(context.Background(), host.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}

// The host's labels under the listed prefixes appear on its Node, follow every change on the
// host, and go when the host loses them; the Node's other labels stay.
func TestHostLabelsKeptInStepOnTheNode(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	host, node := createProvisioned(t, ns, "example.com, rack.example.org",
		map[string]string{"example.com/gpu": "a100", "rack.example.org/row": "3", "other.io/team": "x", "plain": "p"},
		map[string]string{"kubernetes.io/hostname": "n1", "other.io/zone": "z"})

	g.Eventually(func(g Gomega) {
		g.Expect(nodeLabels(g, node)).To(Equal(map[string]string{
			"kubernetes.io/hostname": "n1", "other.io/zone": "z",
			"example.com/gpu": "a100", "rack.example.org/row": "3",
		}))
	}, eventually, poll).Should(Succeed())

	patchHostLabels(g, host, `{"metadata":{"labels":{"example.com/gpu":"h100","rack.example.org/row":null,"example.com/new":"yes"}}}`)
	g.Eventually(func(g Gomega) {
		got := nodeLabels(g, node)
		g.Expect(got).To(HaveKeyWithValue("example.com/gpu", "h100"))
		g.Expect(got).To(HaveKeyWithValue("example.com/new", "yes"))
		g.Expect(got).NotTo(HaveKey("rack.example.org/row"))
		g.Expect(got).To(HaveKeyWithValue("other.io/zone", "z"))
	}, eventually, poll).Should(Succeed())

	// A synced label changed on the Node by hand is put back at the next pass.
	n := &corev1.Node{}
	g.Expect(workload.Client.Get(context.Background(), client.ObjectKeyFromObject(node), n)).To(Succeed())
	orig := n.DeepCopy()
	n.Labels["example.com/gpu"] = "edited"
	g.Expect(workload.Client.Patch(context.Background(), n, client.MergeFrom(orig))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(nodeLabels(g, node)).To(HaveKeyWithValue("example.com/gpu", "h100"))
	}, eventually, poll).Should(Succeed())
}

// Without the annotation nothing is copied; adding it to the Metal3Cluster starts the sync, and
// a prefix that is not one is reported on the Metal3Cluster as an event.
func TestLabelSyncFollowsTheAnnotation(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	_, node := createProvisioned(t, ns, "", map[string]string{"example.com/gpu": "a100"}, nil)
	g.Consistently(func(g Gomega) {
		g.Expect(nodeLabels(g, node)).NotTo(HaveKey("example.com/gpu"))
	}, "2s", poll).Should(Succeed())

	m3c := &infrav1.Metal3Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"}}
	g.Expect(env.Client.Patch(ctx, m3c, client.RawPatch(types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"metal3.io/metal3-label-sync-prefixes":"Not A Prefix"}}}`)))).To(Succeed())
	g.Eventually(func(g Gomega) {
		events := &eventsv1.EventList{}
		g.Expect(env.Client.List(ctx, events, client.InNamespace(ns))).To(Succeed())
		var notes []string
		for _, e := range events.Items {
			if e.Reason == "LabelSyncPrefixesInvalid" && e.Regarding.Kind == "Metal3Cluster" {
				notes = append(notes, e.Note)
			}
		}
		g.Expect(notes).To(ContainElement(ContainSubstring(`"Not A Prefix" is not a label prefix`)))
	}, eventually, poll).Should(Succeed())

	g.Expect(env.Client.Patch(ctx, m3c, client.RawPatch(types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"metal3.io/metal3-label-sync-prefixes":"example.com"}}}`)))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(nodeLabels(g, node)).To(HaveKeyWithValue("example.com/gpu", "a100"))
	}, eventually, poll).Should(Succeed())
}
