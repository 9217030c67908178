package metal3machine

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// expectBMOFieldsKept checks the fields BMO owns and we do not model, set by createHost.
func expectBMOFieldsKept(g Gomega, u *unstructured.Unstructured) {
	field := func(path ...string) any {
		v, found, err := unstructured.NestedFieldNoCopy(u.Object, path...)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(found).To(BeTrue(), "%v is gone", path)
		return v
	}
	g.Expect(field("spec", "bmc", "address")).To(HavePrefix("redfish://10.0.0.1/"))
	g.Expect(field("spec", "rootDeviceHints", "deviceName")).To(Equal("/dev/sda"))
	g.Expect(field("spec", "bootMACAddress")).To(Equal("00:11:22:33:44:55"))
	g.Expect(field("status", "provisioning", "bootMode")).To(Equal("UEFI"))
	g.Expect(field("status", "hardware", "cpu", "count")).To(Equal(int64(32)))
}

// TestMachineLifeCycle follows one machine from creation to deletion, with the test playing
// Cluster API (bootstrap data) and BMO (provisioning states).
func TestMachineLifeCycle(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	cluster := createCluster(t, ns, "c1", clusterOpts{})
	createHost(t, ns, "h1", map[string]string{"key2": "abc"}, bmov1.StateAvailable)
	createHost(t, ns, "h2", map[string]string{"key2": "zzz"}, bmov1.StateAvailable)

	m3m := createMachine(t, cluster, "m1", machineOpts{selector: expr("key2", "in", "abc", "123")})

	// No bootstrap data yet: the machine says so and claims nothing.
	g.Eventually(func(g Gomega) {
		c := condition(getM3M(g, m3m), infrav1.AssociateBareMetalHostCondition)
		g.Expect(c.Reason).To(Equal(infrav1.WaitingForBootstrapDataReason))
		g.Expect(c.Message).To(ContainSubstring("waiting for bootstrap data"))
	}, eventually, poll).Should(Succeed())
	g.Expect(getHost(g, ns, "h1").Spec.ConsumerRef).To(BeNil())

	// The bootstrap provider writes its Secret.
	machine := &clusterv1.Machine{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "m1"}, machine)).To(Succeed())
	orig := machine.DeepCopy()
	machine.Spec.Bootstrap.DataSecretName = ptr.To("m1-bootstrap")
	g.Expect(env.Client.Patch(ctx, machine, client.MergeFrom(orig))).To(Succeed())

	g.Eventually(func(g Gomega) {
		got := getM3M(g, m3m)
		g.Expect(got.Annotations).To(HaveKeyWithValue(infrav1.HostAnnotation, ns+"/h1"))
		g.Expect(got.Spec.ProviderID).To(Equal("metal3://" + ns + "/h1/m1"))
		g.Expect(got.Finalizers).To(ContainElement(infrav1.MachineFinalizer))
		g.Expect(got.Status.UserData).To(Equal(&corev1.SecretReference{Namespace: ns, Name: "m1-bootstrap"}))
		g.Expect(got.Status.Addresses).To(ContainElement(clusterv1.MachineAddress{Type: clusterv1.MachineInternalIP, Address: "192.168.111.20"}))
		g.Expect(condition(got, infrav1.AssociateBareMetalHostCondition).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(condition(got, infrav1.Metal3MachineReadyCondition).Reason).To(Equal(HostProvisioningReason))
	}, eventually, poll).Should(Succeed())

	host := getHost(g, ns, "h1")
	g.Expect(host.Spec.ConsumerRef).To(Equal(&corev1.ObjectReference{
		APIVersion: "infrastructure.cluster.x-k8s.io/v1beta2", Kind: "Metal3Machine", Namespace: ns, Name: "m1",
	}))
	g.Expect(host.Spec.Image).To(Equal(&bmov1.Image{URL: "http://images.example.com/ubuntu.qcow2", Checksum: "0123456789abcdef"}))
	g.Expect(host.Spec.UserData).To(Equal(&corev1.SecretReference{Namespace: ns, Name: "m1-bootstrap"}))
	g.Expect(host.Spec.Online).To(BeTrue())
	g.Expect(host.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "c1"))
	expectBMOFieldsKept(g, getHostUnstructured(g, ns, "h1"))
	g.Expect(getHost(g, ns, "h2").Spec.ConsumerRef).To(BeNil(), "h2 does not match the selector")

	// BMO provisions the host.
	setHostState(t, ns, "h1", bmov1.StateProvisioned)
	g.Eventually(func(g Gomega) {
		got := getM3M(g, m3m)
		g.Expect(got.Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
		g.Expect(condition(got, infrav1.Metal3MachineReadyCondition).Status).To(Equal(metav1.ConditionTrue))
	}, eventually, poll).Should(Succeed())

	// Delete: the host is deprovisioned first and stays claimed until BMO is done.
	g.Expect(env.Client.Delete(ctx, m3m)).To(Succeed())
	g.Eventually(func(g Gomega) {
		h := getHost(g, ns, "h1")
		g.Expect(h.Spec.Image).To(BeNil())
		g.Expect(h.Spec.UserData).To(BeNil())
		g.Expect(h.Spec.Online).To(BeFalse())
		g.Expect(h.Spec.ConsumerRef).NotTo(BeNil(), "still claimed while BMO deprovisions")
		g.Expect(condition(getM3M(g, m3m), infrav1.Metal3MachineReadyCondition).Message).To(ContainSubstring("waiting for host h1 to deprovision"))
	}, eventually, poll).Should(Succeed())

	setHostState(t, ns, "h1", bmov1.StateDeprovisioning)
	g.Consistently(func(g Gomega) {
		g.Expect(getHost(g, ns, "h1").Spec.ConsumerRef).NotTo(BeNil())
	}, "500ms", poll).Should(Succeed())

	setHostState(t, ns, "h1", bmov1.StateAvailable)
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(m3m), &infrav1.Metal3Machine{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the Metal3Machine goes once the host is released")
	}, eventually, poll).Should(Succeed())
	h := getHost(g, ns, "h1")
	g.Expect(h.Spec.ConsumerRef).To(BeNil())
	g.Expect(h.Labels).NotTo(HaveKey(clusterv1.ClusterNameLabel))
	g.Expect(h.Labels).To(HaveKeyWithValue("key2", "abc"))
	expectBMOFieldsKept(g, getHostUnstructured(g, ns, "h1"))
}

func TestNoHostMatchesSelector(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	cluster := createCluster(t, ns, "c1", clusterOpts{})
	createHost(t, ns, "h1", map[string]string{"key2": "zzz"}, bmov1.StateAvailable)
	m3m := createMachine(t, cluster, "m1", machineOpts{bootstrap: "b", selector: expr("key2", "in", "abc", "123")})

	g.Eventually(func(g Gomega) {
		c := condition(getM3M(g, m3m), infrav1.AssociateBareMetalHostCondition)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(infrav1.AssociateBareMetalHostFailedReason))
		g.Expect(c.Message).To(ContainSubstring("no host matches selector key2 in (123,abc)"))
	}, eventually, poll).Should(Succeed())

	// A matching host appears: the waiting machine takes it without waiting for a resync.
	createHost(t, ns, "h2", map[string]string{"key2": "123"}, bmov1.StateAvailable)
	g.Eventually(func(g Gomega) {
		g.Expect(getM3M(g, m3m).Annotations).To(HaveKeyWithValue(infrav1.HostAnnotation, ns+"/h2"))
	}, "3s", poll).Should(Succeed())
}

func TestWaitsForClusterInfrastructure(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	cluster := createCluster(t, ns, "c1", clusterOpts{unprovisioned: true})
	createHost(t, ns, "h1", nil, bmov1.StateAvailable)
	m3m := createMachine(t, cluster, "m1", machineOpts{bootstrap: "b"})
	g.Eventually(func(g Gomega) {
		c := condition(getM3M(g, m3m), infrav1.AssociateBareMetalHostCondition)
		g.Expect(c.Reason).To(Equal(infrav1.WaitingForClusterInfrastructureReadyReason))
	}, eventually, poll).Should(Succeed())
	g.Expect(getHost(g, ns, "h1").Spec.ConsumerRef).To(BeNil())

	// A machine that never got a host goes at once.
	g.Expect(env.Client.Delete(context.Background(), m3m)).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(m3m), &infrav1.Metal3Machine{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
	}, eventually, poll).Should(Succeed())
}

func TestUserGivenSecretsGoToTheHost(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	cluster := createCluster(t, ns, "c1", clusterOpts{})
	createHost(t, ns, "h1", nil, bmov1.StateAvailable)
	user := createSecret(t, ns, "my-user-data", "userData", "#cloud-config\n")
	meta := createSecret(t, ns, "my-meta-data", "metaData", "local-hostname: n1\n")
	network := createSecret(t, ns, "my-network-data", "networkData", "{}")
	// spec.userData wins over the bootstrap data; the Secrets' namespace defaults to the machine's.
	m3m := createMachine(t, cluster, "m1", machineOpts{
		bootstrap:   "bootstrap-ignored",
		userData:    &corev1.SecretReference{Name: user.Name},
		metaData:    meta,
		networkData: &corev1.SecretReference{Name: network.Name},
		cleaning:    ptr.To(infrav1.CleaningModeDisabled),
	})

	g.Eventually(func(g Gomega) {
		h := getHost(g, ns, "h1")
		g.Expect(h.Spec.UserData).To(Equal(user))
		g.Expect(h.Spec.MetaData).To(Equal(meta))
		g.Expect(h.Spec.NetworkData).To(Equal(network))
		got := getM3M(g, m3m)
		g.Expect(got.Status.UserData).To(Equal(user))
		g.Expect(got.Status.MetaData).To(Equal(meta))
		g.Expect(got.Status.NetworkData).To(Equal(network))
		g.Expect(condition(got, infrav1.Metal3MachineDataReadyCondition).Reason).To(Equal(infrav1.SecretsSetExternallyReason))
	}, eventually, poll).Should(Succeed())
	mode, _, _ := unstructured.NestedString(getHostUnstructured(g, ns, "h1").Object, "spec", "automatedCleaningMode")
	g.Expect(mode).To(Equal("disabled"), "spec.automatedCleaningMode is copied to the host")
	// With everything known up front, claim and provisioning are one write to the host's spec.
	g.Consistently(func(g Gomega) {
		g.Expect(getHost(g, ns, "h1").Generation).To(Equal(int64(2)))
	}, "500ms", poll).Should(Succeed())
}

// With spec.dataTemplate and no data claimer wired in, the host is claimed but not provisioned,
// and the machine says what it waits for: no data is made up.
func TestDataTemplateWithoutClaimerWaits(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	cluster := createCluster(t, ns, "c1", clusterOpts{})
	createHost(t, ns, "h1", nil, bmov1.StateAvailable)
	m3m := createMachine(t, cluster, "m1", machineOpts{bootstrap: "b", dataTemplate: &corev1.ObjectReference{Name: "tmpl"}})

	g.Eventually(func(g Gomega) {
		got := getM3M(g, m3m)
		g.Expect(got.Annotations).To(HaveKeyWithValue(infrav1.HostAnnotation, ns+"/h1"))
		c := condition(got, infrav1.Metal3MachineDataReadyCondition)
		g.Expect(c.Reason).To(Equal(infrav1.WaitingForMetal3DataReason))
		g.Expect(c.Message).To(ContainSubstring("waiting for rendered data from Metal3DataTemplate tmpl"))
		g.Expect(condition(got, infrav1.AssociateMetal3MachineMetaDataCondition).Status).To(Equal(metav1.ConditionFalse))
		g.Expect(condition(got, infrav1.Metal3MachineReadyCondition).Message).To(
			Equal("host h1 is claimed, not provisioned: waiting for rendered data from Metal3DataTemplate tmpl"))
	}, eventually, poll).Should(Succeed())
	h := getHost(g, ns, "h1")
	g.Expect(h.Spec.ConsumerRef).NotTo(BeNil())
	g.Expect(h.Spec.Image).To(BeNil(), "no provisioning without the machine's data")
	g.Expect(h.Spec.Online).To(BeFalse())

	// A host that was never provisioned is released at once.
	g.Expect(env.Client.Delete(context.Background(), m3m)).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(m3m), &infrav1.Metal3Machine{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
		g.Expect(getHost(g, ns, "h1").Spec.ConsumerRef).To(BeNil())
	}, eventually, poll).Should(Succeed())
}

func TestHostInErrorIsReported(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	cluster := createCluster(t, ns, "c1", clusterOpts{})
	createHost(t, ns, "h1", nil, bmov1.StateAvailable)
	m3m := createMachine(t, cluster, "m1", machineOpts{bootstrap: "b"})
	g.Eventually(func(g Gomega) {
		g.Expect(getM3M(g, m3m).Annotations).To(HaveKey(infrav1.HostAnnotation))
	}, eventually, poll).Should(Succeed())

	host := getHost(g, ns, "h1")
	orig := host.DeepCopy()
	host.Status.OperationalStatus = bmov1.OperationalStatusError
	host.Status.ErrorType = "provisioning error"
	host.Status.ErrorMessage = "Image provisioning failed: checksum mismatch"
	g.Expect(env.Client.Status().Patch(ctx, host, client.MergeFrom(orig))).To(Succeed())

	g.Eventually(func(g Gomega) {
		c := condition(getM3M(g, m3m), infrav1.Metal3MachineReadyCondition)
		g.Expect(c.Reason).To(Equal(HostErrorReason))
		g.Expect(c.Message).To(ContainSubstring("host h1 is in error: Image provisioning failed: checksum mismatch"))
	}, eventually, poll).Should(Succeed())
}

func TestPausePropagatesToTheHost(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	cluster := createCluster(t, ns, "c1", clusterOpts{})
	createHost(t, ns, "h1", nil, bmov1.StateAvailable)
	m3m := createMachine(t, cluster, "m1", machineOpts{bootstrap: "b"})
	g.Eventually(func(g Gomega) {
		g.Expect(getM3M(g, m3m).Annotations).To(HaveKey(infrav1.HostAnnotation))
	}, eventually, poll).Should(Succeed())

	setPaused := func(paused bool) {
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), c)).To(Succeed())
		orig := c.DeepCopy()
		c.Spec.Paused = ptr.To(paused)
		g.Expect(env.Client.Patch(ctx, c, client.MergeFrom(orig))).To(Succeed())
	}

	setPaused(true)
	g.Eventually(func(g Gomega) {
		g.Expect(getHost(g, ns, "h1").Annotations).To(HaveKeyWithValue(bmov1.PausedAnnotation, "metal3.io/capm3"))
		g.Expect(condition(getM3M(g, m3m), clusterv1.PausedCondition).Status).To(Equal(metav1.ConditionTrue))
	}, eventually, poll).Should(Succeed())

	setPaused(false)
	g.Eventually(func(g Gomega) {
		g.Expect(getHost(g, ns, "h1").Annotations).NotTo(HaveKey(bmov1.PausedAnnotation))
		g.Expect(condition(getM3M(g, m3m), clusterv1.PausedCondition).Status).To(Equal(metav1.ConditionFalse))
	}, eventually, poll).Should(Succeed())

	// A pause someone else set survives our unpause.
	host := getHost(g, ns, "h1")
	orig := host.DeepCopy()
	host.Annotations = map[string]string{bmov1.PausedAnnotation: "admin"}
	g.Expect(env.Client.Patch(ctx, host, client.MergeFrom(orig))).To(Succeed())
	setPaused(true)
	setPaused(false)
	g.Eventually(func(g Gomega) {
		g.Expect(condition(getM3M(g, m3m), clusterv1.PausedCondition).Status).To(Equal(metav1.ConditionFalse))
	}, eventually, poll).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(getHost(g, ns, "h1").Annotations).To(HaveKeyWithValue(bmov1.PausedAnnotation, "admin"))
	}, "500ms", poll).Should(Succeed())
}
