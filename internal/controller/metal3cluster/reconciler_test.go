package metal3cluster_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/metal3cluster"
	"github.com/metalwire/metalwire/internal/manager/managertest"
	"github.com/metalwire/metalwire/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(run(m)) }

// run starts the shared API server and a manager with the Metal3Cluster reconciler.
func run(m *testing.M) int {
	started, err := testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	env = started
	defer func() { _ = env.Stop() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The image's manager (managertest), with this package's reconciler alone.
	mgr, err := managertest.Build(ctx, env, "", nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	r := &metal3cluster.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("metal3cluster")}
	if err := r.SetupWithManager(ctx, mgr, 2); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return testenv.RunWithManagers(m, cancel, done)
}

const (
	eventually = 20 * time.Second
	poll       = 100 * time.Millisecond
)

func newNamespace(g Gomega, name string) string {
	g.Expect(env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

// createPair makes a Cluster owning a Metal3Cluster, as Cluster API would.
func createPair(g Gomega, ns, name string, paused bool) *infrav1.Metal3Cluster {
	ctx := context.Background()
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1.ClusterSpec{
			Paused:            ptr.To(paused),
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Cluster", Name: name},
		},
	}
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
	m3c := &infrav1.Metal3Cluster{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: name, UID: cluster.UID}},
		},
		Spec: infrav1.Metal3ClusterSpec{
			ControlPlaneEndpoint: infrav1.APIEndpoint{Host: "192.168.111.249", Port: 6443},
			FailureDomains:       []clusterv1.FailureDomain{{Name: "rack-1", ControlPlane: ptr.To(true)}},
		},
	}
	g.Expect(env.Client.Create(ctx, m3c)).To(Succeed())
	return m3c
}

func get(g Gomega, m3c *infrav1.Metal3Cluster) *infrav1.Metal3Cluster {
	out := &infrav1.Metal3Cluster{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(m3c), out)).To(Succeed())
	return out
}

func TestProvisionedOnceTheEndpointIsValid(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(g, "provisioned")
	m3c := createPair(g, ns, "c1", false)
	g.Eventually(func(g Gomega) {
		got := get(g, m3c)
		g.Expect(got.Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
		g.Expect(got.Finalizers).To(ContainElement(infrav1.ClusterFinalizer))
		g.Expect(conditions.IsTrue(got, infrav1.BaremetalInfrastructureReadyCondition)).To(BeTrue())
		g.Expect(conditions.IsTrue(got, infrav1.Metal3ClusterReadyCondition)).To(BeTrue())
		g.Expect(conditions.IsFalse(got, clusterv1.PausedCondition)).To(BeTrue())
		g.Expect(got.Status.FailureDomains).To(Equal([]clusterv1.FailureDomain{{Name: "rack-1", ControlPlane: ptr.To(true)}}))
	}, eventually, poll).Should(Succeed())
}

func TestWaitsForItsCluster(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(g, "orphan")
	m3c := &infrav1.Metal3Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
		Spec:       infrav1.Metal3ClusterSpec{ControlPlaneEndpoint: infrav1.APIEndpoint{Host: "10.0.0.1"}},
	}
	g.Expect(env.Client.Create(context.Background(), m3c)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := conditions.Get(get(g, m3c), infrav1.Metal3ClusterReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(metal3cluster.WaitingForOwnerClusterReason))
		g.Expect(c.Message).To(ContainSubstring("spec.infrastructureRef"))
	}, eventually, poll).Should(Succeed())
}

func TestPausedClusterIsLeftAlone(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(g, "paused")
	m3c := createPair(g, ns, "c1", true)
	g.Eventually(func(g Gomega) {
		g.Expect(conditions.IsTrue(get(g, m3c), clusterv1.PausedCondition)).To(BeTrue())
	}, eventually, poll).Should(Succeed())
	g.Consistently(func(g Gomega) {
		got := get(g, m3c)
		g.Expect(got.Status.Initialization.Provisioned).To(BeNil())
		g.Expect(got.Finalizers).To(BeEmpty())
	}, "500ms", poll).Should(Succeed())
}

func TestDeletionWaitsForTheMachines(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(g, "deletion")
	m3c := createPair(g, ns, "c1", false)
	g.Eventually(func(g Gomega) {
		g.Expect(get(g, m3c).Finalizers).To(ContainElement(infrav1.ClusterFinalizer))
	}, eventually, poll).Should(Succeed())
	m3m := &infrav1.Metal3Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1", Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}},
		Spec:       infrav1.Metal3MachineSpec{Image: infrav1.Image{URL: "http://img/u.qcow2", Checksum: ptr.To("abc")}},
	}
	g.Expect(env.Client.Create(ctx, m3m)).To(Succeed())

	g.Expect(env.Client.Delete(ctx, m3c)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := conditions.Get(get(g, m3c), infrav1.Metal3ClusterReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Message).To(Equal("waiting for 1 Metal3Machines of cluster c1 to be deleted (first: m1)"))
	}, eventually, poll).Should(Succeed())

	g.Expect(env.Client.Delete(ctx, m3m)).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(m3c), &infrav1.Metal3Cluster{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
	}, eventually, poll).Should(Succeed())
}
