package simulator_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	"github.com/metalwire/metalwire/internal/simulator"
)

const wait = 10 * time.Second

func provision(h *bmov1.BareMetalHost) {
	h.Spec.Online = true
	h.Spec.Image = &bmov1.Image{URL: "http://images.example/ubuntu-24.04.qcow2", Checksum: "http://images.example/ubuntu-24.04.qcow2.sha256sum", ChecksumType: "sha256"}
	h.Spec.ConsumerRef = &corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta2", Kind: "Metal3Machine", Name: "m-0", Namespace: h.Namespace}
}

func TestHostGoesThroughEveryStateOnBMOsTriggers(t *testing.T) {
	g := NewWithT(t)
	r := startSimulator(t)
	ctx := context.Background()

	names, err := r.sim.CreateHosts(ctx, r.ns, 1, simulator.HostOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(names).To(Equal([]string{"host-0"}))

	// Before inspection BMO knows only the boot MAC; hardware details come at its end.
	g.Eventually(r.state("host-0"), wait).Should(Equal(bmov1.StateRegistering))
	h := r.host(g, "host-0")
	g.Expect(h.Spec.BootMACAddress).To(Equal(simulator.MAC("host-0", "eno1")))
	g.Expect(h.Status.HardwareDetails).To(BeNil())

	g.Eventually(r.state("host-0"), wait).Should(Equal(bmov1.StateAvailable))
	h = r.host(g, "host-0")
	g.Expect(h.Status.OperationalStatus).To(Equal(bmov1.OperationalStatusOK))
	g.Expect(h.Status.HardwareDetails).NotTo(BeNil())
	g.Expect(len(h.Status.HardwareDetails.NIC)).To(BeNumerically(">=", 2))
	pxe := h.Status.HardwareDetails.NIC[0]
	g.Expect(pxe.Name).To(Equal("eno1"))
	g.Expect(pxe.PXE).To(BeTrue())
	g.Expect(pxe.MAC).To(Equal(h.Spec.BootMACAddress))
	g.Expect(pxe.LLDP).NotTo(BeNil())
	g.Expect(pxe.LLDP.SwitchSystemName).To(Equal("leaf-1"))
	g.Expect(pxe.LLDP.PortID).To(Equal("Ethernet1/1"), "host-0's onboard NIC is on the first port")

	// An available host stays available until it has an image, is online and is consumed.
	r.patchSpec(g, "host-0", func(h *bmov1.BareMetalHost) {
		h.Spec.Image = &bmov1.Image{URL: "http://images.example/ubuntu.qcow2"}
	})
	g.Consistently(r.state("host-0"), time.Second).Should(Equal(bmov1.StateAvailable))

	r.secret(g, "host-0-metadata", map[string]string{"metaData": "local-hostname: node-a\nrack: r12\n"})
	r.secret(g, "host-0-networkdata", map[string]string{"networkData": "links:\n- id: eno1\n  type: phy\n  ethernet_mac_address: aa:bb:cc:dd:ee:ff\nnetworks: []\nservices: []\n"})
	r.secret(g, "host-0-userdata", map[string]string{"value": "#cloud-config\nhostname: node-a\n"})
	r.patchSpec(g, "host-0", func(h *bmov1.BareMetalHost) {
		provision(h)
		h.Spec.MetaData = &corev1.SecretReference{Name: "host-0-metadata"}
		h.Spec.NetworkData = &corev1.SecretReference{Name: "host-0-networkdata"}
		h.Spec.UserData = &corev1.SecretReference{Name: "host-0-userdata"}
	})
	g.Eventually(r.state("host-0"), wait).Should(Equal(bmov1.StateProvisioned))
	h = r.host(g, "host-0")
	g.Expect(h.Status.Provisioning.Image.URL).To(Equal("http://images.example/ubuntu-24.04.qcow2"))
	g.Expect(h.Status.PoweredOn).To(BeTrue())

	// The files the host booted with: BMO's default metaData overlaid by the Secret's.
	dir := filepath.Join(r.dir, "hosts", r.ns+"_host-0")
	meta := map[string]any{}
	g.Expect(json.Unmarshal(readFile(g, dir, "meta_data.json"), &meta)).To(Succeed())
	g.Expect(meta).To(Equal(map[string]any{
		"uuid":             string(h.UID),
		"metal3-namespace": r.ns,
		"metal3-name":      "host-0",
		"local-hostname":   "node-a", // from the Secret
		"local_hostname":   "host-0",
		"name":             "host-0",
		"rack":             "r12",
	}))
	network := map[string]any{}
	g.Expect(json.Unmarshal(readFile(g, dir, "network_data.json"), &network)).To(Succeed())
	g.Expect(network["links"]).To(ConsistOf(HaveKeyWithValue("ethernet_mac_address", "aa:bb:cc:dd:ee:ff")))
	g.Expect(string(readFile(g, dir, "user_data"))).To(Equal("#cloud-config\nhostname: node-a\n"))

	// Clearing the image deprovisions; the files stay, marked.
	r.patchSpec(g, "host-0", func(h *bmov1.BareMetalHost) { h.Spec.Image = nil })
	g.Eventually(r.state("host-0"), wait).Should(Equal(bmov1.StateDeprovisioning))
	g.Eventually(r.state("host-0"), wait).Should(Equal(bmov1.StateAvailable))
	g.Expect(filepath.Join(dir, "meta_data.json")).To(BeAnExistingFile())
	g.Expect(string(readFile(g, dir, simulator.DeprovisionedMarker))).To(ContainSubstring("deprovisioned at"))
	g.Expect(r.host(g, "host-0").Status.Provisioning.Image.URL).To(BeEmpty())

	// The callback records a step just after its status patch lands, so wait for it.
	g.Eventually(func() []bmov1.ProvisioningState { return r.statesOf("host-0") }, wait).Should(Equal([]bmov1.ProvisioningState{
		bmov1.StateRegistering, bmov1.StateInspecting, bmov1.StateAvailable,
		bmov1.StateProvisioning, bmov1.StateProvisioned, bmov1.StateDeprovisioning, bmov1.StateAvailable,
	}))

	// Provisioned again without networkData: the old network_data.json is not left behind.
	r.patchSpec(g, "host-0", func(h *bmov1.BareMetalHost) {
		provision(h)
		h.Spec.NetworkData = nil
	})
	g.Eventually(r.state("host-0"), wait).Should(Equal(bmov1.StateProvisioned))
	g.Expect(filepath.Join(dir, "network_data.json")).NotTo(BeAnExistingFile())
	g.Expect(filepath.Join(dir, simulator.DeprovisionedMarker)).NotTo(BeAnExistingFile())
}

func TestMissingSecretHoldsProvisioningAndSaysWhich(t *testing.T) {
	g := NewWithT(t)
	r := startSimulator(t)
	_, err := r.sim.CreateHosts(context.Background(), r.ns, 1, simulator.HostOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(r.state("host-0"), wait).Should(Equal(bmov1.StateAvailable))

	r.patchSpec(g, "host-0", func(h *bmov1.BareMetalHost) {
		provision(h)
		h.Spec.UserData = &corev1.SecretReference{Name: "later"}
	})
	g.Eventually(func() string { return r.host(g, "host-0").Status.ErrorMessage }, wait).
		Should(Equal("spec.userData: Secret " + r.ns + "/later not found; create it or fix the reference"))
	g.Expect(r.host(g, "host-0").Status.Provisioning.State).To(Equal(bmov1.StateProvisioning))

	r.secret(g, "later", map[string]string{"userData": "#cloud-config\n"})
	g.Eventually(r.state("host-0"), wait).Should(Equal(bmov1.StateProvisioned))
	g.Expect(r.host(g, "host-0").Status.ErrorMessage).To(BeEmpty())
}

func TestPausedHostDoesNotMove(t *testing.T) {
	g := NewWithT(t)
	r := startSimulator(t)
	// Any value pauses, not only BMO's own.
	_, err := r.sim.CreateHosts(context.Background(), r.ns, 1, simulator.HostOptions{
		Annotations: map[string]string{bmov1.PausedAnnotation: "someone-else"},
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Consistently(r.state("host-0"), 1500*time.Millisecond).Should(Equal(bmov1.StateNone))

	r.patchSpec(g, "host-0", func(h *bmov1.BareMetalHost) { delete(h.Annotations, bmov1.PausedAnnotation) })
	g.Eventually(r.state("host-0"), wait).Should(Equal(bmov1.StateAvailable))

	// Paused while available: a provisioning request waits for the pause to end.
	r.patchSpec(g, "host-0", func(h *bmov1.BareMetalHost) {
		h.Annotations = map[string]string{bmov1.PausedAnnotation: ""}
		provision(h)
	})
	g.Consistently(r.state("host-0"), 1500*time.Millisecond).Should(Equal(bmov1.StateAvailable))
	r.patchSpec(g, "host-0", func(h *bmov1.BareMetalHost) { delete(h.Annotations, bmov1.PausedAnnotation) })
	g.Eventually(r.state("host-0"), wait).Should(Equal(bmov1.StateProvisioned))
}

func TestDetachedHostIsMarkedAndDoesNotMove(t *testing.T) {
	g := NewWithT(t)
	r := startSimulator(t)
	_, err := r.sim.CreateHosts(context.Background(), r.ns, 1, simulator.HostOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(r.state("host-0"), wait).Should(Equal(bmov1.StateAvailable))

	r.patchSpec(g, "host-0", func(h *bmov1.BareMetalHost) {
		h.Annotations = map[string]string{bmov1.DetachedAnnotation: ""}
		provision(h)
	})
	g.Eventually(func() bmov1.OperationalStatus { return r.host(g, "host-0").Status.OperationalStatus }, wait).
		Should(Equal(bmov1.OperationalStatusDetached))
	g.Consistently(r.state("host-0"), 1500*time.Millisecond).Should(Equal(bmov1.StateAvailable))

	r.patchSpec(g, "host-0", func(h *bmov1.BareMetalHost) { delete(h.Annotations, bmov1.DetachedAnnotation) })
	g.Eventually(r.state("host-0"), wait).Should(Equal(bmov1.StateProvisioned))
	g.Expect(r.host(g, "host-0").Status.OperationalStatus).To(Equal(bmov1.OperationalStatusOK))
}

func TestPreprovisioningGateHoldsInspectionUntilTheSecretExists(t *testing.T) {
	g := NewWithT(t)
	r := startSimulator(t)
	_, err := r.sim.CreateHosts(context.Background(), r.ns, 1, simulator.HostOptions{
		Annotations: map[string]string{bmov1.PreprovisioningNetworkDataReferenceAnnotation: "metal3preprovisioningdatatemplates.infrastructure.cluster.x-k8s.io/preprov"},
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(r.state("host-0"), wait).Should(Equal(bmov1.StateRegistering))
	g.Consistently(r.state("host-0"), time.Second).Should(Equal(bmov1.StateRegistering))

	// Named but not there yet: still held.
	r.patchSpec(g, "host-0", func(h *bmov1.BareMetalHost) { h.Spec.PreprovisioningNetworkDataName = "host-0-preprov-networkdata" })
	g.Consistently(r.state("host-0"), time.Second).Should(Equal(bmov1.StateRegistering))
	g.Expect(r.host(g, "host-0").Status.HardwareDetails).To(BeNil(), "not inspected")

	// A Secret without the networkData key: BMO cannot register the host and says why.
	r.secret(g, "host-0-preprov-networkdata", map[string]string{"network": "{}"})
	g.Eventually(func() string { return r.host(g, "host-0").Status.ErrorMessage }, wait).
		Should(Equal("spec.preprovisioningNetworkDataName: Secret " + r.ns + "/host-0-preprov-networkdata has no key \"networkData\"; BMO reads the data from that key"))
	g.Expect(r.host(g, "host-0").Status.Provisioning.State).To(Equal(bmov1.StateRegistering))
	g.Expect(env.Client.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "host-0-preprov-networkdata", Namespace: r.ns}})).To(Succeed())

	r.secret(g, "host-0-preprov-networkdata", map[string]string{"networkData": `{"links":[{"id":"eno1","type":"phy","ethernet_mac_address":"3c:fd:fe:00:00:01"}],"networks":[{"id":"prov","type":"ipv4","link":"eno1","ip_address":"192.168.0.10","netmask":"255.255.255.0"}],"services":[]}`})
	g.Eventually(r.state("host-0"), wait).Should(Equal(bmov1.StateAvailable))
	g.Eventually(func() []bmov1.ProvisioningState { return r.statesOf("host-0") }, wait).
		Should(Equal([]bmov1.ProvisioningState{bmov1.StateRegistering, bmov1.StateInspecting, bmov1.StateAvailable}))
	g.Expect(r.host(g, "host-0").Status.ErrorMessage).To(BeEmpty())

	preprov := map[string]any{}
	g.Expect(json.Unmarshal(readFile(g, filepath.Join(r.dir, "hosts", r.ns+"_host-0"), "preprov_network_data.json"), &preprov)).To(Succeed())
	g.Expect(preprov["networks"]).To(ConsistOf(HaveKeyWithValue("ip_address", "192.168.0.10")))
}

func TestFieldsOutsideOurSubsetSurvive(t *testing.T) {
	g := NewWithT(t)
	r := startSimulator(t)
	_, err := r.sim.CreateHosts(context.Background(), r.ns, 1, simulator.HostOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(r.state("host-0"), wait).Should(Equal(bmov1.StateAvailable))

	// Another writer's status field, unknown to the simulator, survives its status patches.
	before := r.raw(g, "host-0")
	withCredentials := before.DeepCopy()
	g.Expect(unstructured.SetNestedField(withCredentials.Object, "abc123", "status", "goodCredentials", "credentialsVersion")).To(Succeed())
	g.Expect(env.Client.Status().Patch(context.Background(), withCredentials, client.MergeFrom(before))).To(Succeed())

	r.patchSpec(g, "host-0", provision)
	spec := field(r.raw(g, "host-0"), "spec")
	g.Eventually(r.state("host-0"), wait).Should(Equal(bmov1.StateProvisioned))

	u := r.raw(g, "host-0")
	g.Expect(field(u, "spec")).To(Equal(spec), "the simulator never changes spec")
	g.Expect(field(u, "status", "goodCredentials", "credentialsVersion")).To(Equal("abc123"))
	g.Expect(field(u, "spec", "bmc", "credentialsName")).To(Equal("host-0-bmc-secret"))
	g.Expect(field(u, "spec", "bmc", "address")).To(HavePrefix("redfish-virtualmedia+https://"))
	g.Expect(field(u, "spec", "bootMode")).To(Equal("UEFI"))
	g.Expect(field(u, "spec", "rootDeviceHints", "deviceName")).To(Equal("/dev/sda"))
	g.Expect(field(u, "status", "hardware", "cpu", "arch")).To(Equal("x86_64"))
	g.Expect(field(u, "status", "hardware", "systemVendor", "manufacturer")).To(Equal("Supermicro"))
	g.Expect(field(u, "status", "provisioning", "image", "checksumType")).To(Equal("sha256"))
	g.Expect(field(u, "status", "provisioning", "ID")).NotTo(BeEmpty())

	credentials := &corev1.Secret{}
	g.Expect(env.Client.Get(context.Background(), r.key("host-0-bmc-secret"), credentials)).To(Succeed())
	g.Expect(credentials.Data).To(HaveKey("username"))
}

func TestCreateHostsKeepsExistingHosts(t *testing.T) {
	g := NewWithT(t)
	r := startSimulator(t)
	ctx := context.Background()
	_, err := r.sim.CreateHosts(ctx, r.ns, 2, simulator.HostOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(r.state("host-1"), wait).Should(Equal(bmov1.StateAvailable))
	uid := r.host(g, "host-1").UID

	names, err := r.sim.CreateHosts(ctx, r.ns, 3, simulator.HostOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(names).To(Equal([]string{"host-0", "host-1", "host-2"}))
	g.Expect(r.host(g, "host-1").UID).To(Equal(uid))
	g.Expect(r.host(g, "host-1").Status.Provisioning.State).To(Equal(bmov1.StateAvailable))
	g.Eventually(r.state("host-2"), wait).Should(Equal(bmov1.StateAvailable))
}

func readFile(g Gomega, dir, name string) []byte {
	b, err := os.ReadFile(filepath.Join(dir, name))
	g.Expect(err).NotTo(HaveOccurred())
	return b
}
