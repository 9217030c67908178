package testenv_test

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	"github.com/metalwire/metalwire/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// A host as BMO would write it: fields we model and fields we don't (bmc, rootDeviceHints,
// hardware.cpu, a future field), in spec and status.
const bmoHost = `
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: host-0
  namespace: default
spec:
  online: false
  bootMACAddress: "00:11:22:33:44:55"
  bmc:
    address: redfish://10.0.0.1/redfish/v1/Systems/1
    credentialsName: host-0-bmc
  rootDeviceHints:
    deviceName: /dev/sda
  aFieldFromTheFuture: {nested: [1, 2, 3]}
`

func TestBareMetalHostKeepsFieldsWeDoNotModel(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()

	u := &unstructured.Unstructured{}
	g.Expect(yamlToUnstructured(bmoHost, u)).To(Succeed())
	g.Expect(env.Client.Create(ctx, u)).To(Succeed())
	u.Object["status"] = map[string]any{
		"operationalStatus": "OK",
		"provisioning":      map[string]any{"state": "available", "bootMode": "UEFI"},
		"hardware": map[string]any{
			"cpu":  map[string]any{"arch": "x86_64", "count": int64(32)},
			"nics": []any{map[string]any{"name": "eno1", "mac": "00:11:22:33:44:55", "model": "0x8086 0x1572", "pxe": true}},
		},
	}
	g.Expect(env.Client.Status().Update(ctx, u)).To(Succeed())

	// Change our fields through our typed subset, by merge patch, as controllers must.
	host := &bmov1.BareMetalHost{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "host-0"}, host)).To(Succeed())
	g.Expect(host.Status.Provisioning.State).To(Equal(bmov1.StateAvailable))
	g.Expect(host.Status.HardwareDetails.NIC).To(HaveLen(1))
	before := host.DeepCopy()
	host.Spec.Online = true
	host.Spec.Image = &bmov1.Image{URL: "http://images/ubuntu.img", Checksum: "abc", ChecksumType: "sha256"}
	host.Spec.ConsumerRef = &corev1.ObjectReference{Kind: "Metal3Machine", Name: "m-0", Namespace: "default"}
	g.Expect(env.Client.Patch(ctx, host, client.MergeFrom(before))).To(Succeed())

	got := &unstructured.Unstructured{}
	got.SetAPIVersion("metal3.io/v1alpha1")
	got.SetKind("BareMetalHost")
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "host-0"}, got)).To(Succeed())

	g.Expect(field(got, "spec", "bmc", "credentialsName")).To(Equal("host-0-bmc"))
	g.Expect(field(got, "spec", "rootDeviceHints", "deviceName")).To(Equal("/dev/sda"))
	g.Expect(field(got, "spec", "aFieldFromTheFuture", "nested")).To(HaveLen(3))
	g.Expect(field(got, "status", "provisioning", "bootMode")).To(Equal("UEFI"))
	g.Expect(field(got, "status", "hardware", "cpu", "arch")).To(Equal("x86_64"))
	g.Expect(field(got, "status", "hardware", "nics")).To(ConsistOf(HaveKeyWithValue("model", "0x8086 0x1572")))
	// And our change landed.
	g.Expect(field(got, "spec", "online")).To(BeTrue())
	g.Expect(field(got, "spec", "image", "url")).To(Equal("http://images/ubuntu.img"))
	g.Expect(field(got, "spec", "consumerRef", "name")).To(Equal("m-0"))
}

func TestClusterAPICRDsAreInstalled(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "cl", Namespace: "default"},
		Spec: clusterv1.ClusterSpec{
			ClusterNetwork: clusterv1.ClusterNetwork{Pods: clusterv1.NetworkRanges{CIDRBlocks: []string{"192.168.0.0/18"}}},
		},
	}
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
	got := &clusterv1.Cluster{}
	g.Eventually(func() error {
		return env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), got)
	}, 5*time.Second).Should(Succeed())
	g.Expect(got.Spec.ClusterNetwork.Pods.CIDRBlocks).To(Equal([]string{"192.168.0.0/18"}))
}

func TestMissingBinariesSayRunMakeTools(t *testing.T) {
	g := NewWithT(t)
	t.Setenv("KUBEBUILDER_ASSETS", t.TempDir())
	_, err := testenv.Start()
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("run make tools"))
	g.Expect(strings.Count(err.Error(), "\n")).To(BeZero(), "one line, not a stack trace")
}
