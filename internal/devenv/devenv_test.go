package devenv_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	"github.com/metalwire/metalwire/internal/devenv"
	"github.com/metalwire/metalwire/internal/scheme"
	"github.com/metalwire/metalwire/internal/simulator"
	"github.com/metalwire/metalwire/test/e2e/framework"
)

var (
	env *devenv.Env
	dir string
	out = &syncBuffer{}
)

// A cluster with a MachineDeployment of one machine, written as for a real management cluster:
// enough for Cluster API's webhooks and controllers to show they run (MachineDeployment
// defaulted, Cluster phase, MachineSet and Machine created, infrastructure cloned).
const cluster = `
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: demo
spec:
  clusterNetwork:
    pods:
      cidrBlocks: ["192.168.0.0/18"]
  infrastructureRef:
    apiGroup: infrastructure.cluster.x-k8s.io
    kind: Metal3Cluster
    name: demo
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Cluster
metadata:
  name: demo
spec:
  controlPlaneEndpoint:
    host: 192.168.111.249
    port: 6443
---
# the bootstrap data every machine boots with: no kubeadm in dev mode
apiVersion: v1
kind: Secret
metadata:
  name: demo-bootstrap
stringData:
  value: "#cloud-config\n"
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3MachineTemplate
metadata:
  name: demo-workers
spec:
  template:
    spec:
      image:
        url: http://images.example.com/ubuntu.qcow2
        checksum: http://images.example.com/ubuntu.qcow2.sha256sum
        checksumType: sha256
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata:
  name: demo-workers
spec:
  clusterName: demo
  replicas: 1
  # no rollout strategy, selector or labels: Cluster API's defaulting webhook adds them
  template:
    spec:
      clusterName: demo
      version: v1.34.0
      bootstrap:
        dataSecretName: demo-bootstrap
      infrastructureRef:
        apiGroup: infrastructure.cluster.x-k8s.io
        kind: Metal3MachineTemplate
        name: demo-workers
`

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	var err error
	if dir, err = os.MkdirTemp("", "devenv-"); err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	if err := framework.BuildClusterAPI(dir); err != nil {
		return 0, err
	}
	manifests := filepath.Join(dir, "manifests")
	if err := os.MkdirAll(manifests, 0o750); err != nil {
		return 0, err
	}
	if err := os.WriteFile(filepath.Join(manifests, "cluster.yaml"), []byte(cluster), 0o600); err != nil {
		return 0, err
	}
	env, err = devenv.Start(context.Background(), devenv.Options{
		Dir:    filepath.Join(dir, "dev"),
		Hosts:  2,
		Apply:  []string{manifests},
		Delays: simulator.Delays{Registering: 100 * time.Millisecond, Inspecting: 100 * time.Millisecond, Provisioning: 100 * time.Millisecond, Deprovisioning: 100 * time.Millisecond},
		Out:    out,
	})
	if err != nil {
		return 0, err
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		return 1, err
	}
	return code, nil
}

func TestKubeconfigReachesTheAPIServerAndHostsBecomeAvailable(t *testing.T) {
	g := NewWithT(t)
	g.Expect(env.KubeconfigPath).To(Equal(filepath.Join(dir, "dev", "kubeconfig")))
	cfg, err := clientcmd.BuildConfigFromFlags("", env.KubeconfigPath)
	g.Expect(err).NotTo(HaveOccurred())
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	g.Expect(err).NotTo(HaveOccurred())

	g.Eventually(func(g Gomega) {
		hosts := &bmov1.BareMetalHostList{}
		g.Expect(c.List(context.Background(), hosts, client.InNamespace("default"))).To(Succeed())
		g.Expect(hosts.Items).To(HaveLen(2))
		for _, h := range hosts.Items {
			g.Expect(h.Status.Provisioning.State).To(Equal(bmov1.StateAvailable), h.Name)
		}
	}, 20*time.Second, 200*time.Millisecond).Should(Succeed())

	g.Expect(out.String()).To(ContainSubstring("control plane started"))
	g.Expect(out.String()).To(ContainSubstring("2 hosts created in namespace default: host-0, host-1"))
	g.Expect(out.String()).To(MatchRegexp(`applied .*manifests: 5 objects`))
	// A transition is printed after the host's status is written: the line may come a moment
	// after the API server shows the state.
	for _, h := range []string{"host-0", "host-1"} {
		g.Eventually(out.String).WithTimeout(5 * time.Second).Should(ContainSubstring("host default/" + h + ": inspecting -> available"))
	}
}

func TestClusterAPIControllersRun(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	// Cluster API's defaulting webhook filled in what the manifest left out.
	md := &clusterv1.MachineDeployment{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "demo-workers"}, md)).To(Succeed())
	g.Expect(md.Spec.Rollout.Strategy.Type).To(Equal(clusterv1.RollingUpdateMachineDeploymentStrategyType))
	g.Expect(md.Spec.Selector.MatchLabels).To(HaveKeyWithValue("cluster.x-k8s.io/deployment-name", "demo-workers"))

	// The MachineDeployment controller made a MachineSet, whose controller made a Machine with
	// a Metal3Machine cloned from the template.
	g.Eventually(func(g Gomega) {
		machines := &clusterv1.MachineList{}
		g.Expect(env.Client.List(ctx, machines, client.InNamespace("default"))).To(Succeed())
		g.Expect(machines.Items).To(HaveLen(1))
		g.Expect(machines.Items[0].Spec.InfrastructureRef.Kind).To(Equal("Metal3Machine"))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	// Cluster API's Machine controller (in metalwire-capi) follows the Metal3Machine to phase
	// Provisioned: infrastructure ready, providerID set. With no workload cluster, no further.
	g.Eventually(func(g Gomega) {
		machines := &clusterv1.MachineList{}
		g.Expect(env.Client.List(ctx, machines, client.InNamespace("default"))).To(Succeed())
		g.Expect(machines.Items).To(HaveLen(1))
		g.Expect(machines.Items[0].Status.Phase).To(Equal(string(clusterv1.MachinePhaseProvisioned)))
		g.Expect(machines.Items[0].Spec.ProviderID).NotTo(BeEmpty())
	}, time.Minute, 200*time.Millisecond).Should(Succeed())
	// The Cluster controller reports a phase.
	g.Eventually(func() string {
		c := &clusterv1.Cluster{}
		_ = env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "demo"}, c)
		return c.Status.Phase
	}, 30*time.Second).ShouldNot(BeEmpty())

	// And its validating webhook refuses what Cluster API refuses.
	bad := &clusterv1.MachineDeployment{}
	bad.Name, bad.Namespace = "bad", "default"
	bad.Spec.ClusterName = "demo"
	bad.Spec.Template.Spec.ClusterName = "another"
	bad.Spec.Template.Spec.Bootstrap.DataSecretName = ptr("demo-bootstrap")
	bad.Spec.Template.Spec.InfrastructureRef = md.Spec.Template.Spec.InfrastructureRef
	err := env.Client.Create(ctx, bad)
	g.Expect(err).To(MatchError(ContainSubstring("spec.template.spec.clusterName")))
}

func ptr[T any](v T) *T { return &v }

func TestApplyNamesTheFileAndDocumentThatFailed(t *testing.T) {
	g := NewWithT(t)
	file := filepath.Join(t.TempDir(), "pool.yaml")
	g.Expect(os.WriteFile(file, []byte(`---
apiVersion: v1
kind: ConfigMap
metadata: {name: first}
---
# a comment-only document is not counted
---
apiVersion: ipam.metal3.io/v1alpha1
kind: IPPool
metadata: {name: bad-pool}
spec:
  pools:
  - start: 192.168.0.20
    end: 192.168.0.10
`), 0o600)).To(Succeed())
	n, err := devenv.Apply(context.Background(), env.Client, file)
	g.Expect(n).To(Equal(1))
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(HavePrefix(file + ": document 2 (IPPool bad-pool): "))

	cm := &corev1.ConfigMap{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "first"}, cm)).To(Succeed())

	_, err = devenv.Apply(context.Background(), env.Client, filepath.Join(t.TempDir(), "missing.yaml"))
	g.Expect(err).To(MatchError(ContainSubstring("missing.yaml: no such file or directory")))

	unknown := filepath.Join(t.TempDir(), "unknown.yaml")
	g.Expect(os.WriteFile(unknown, []byte("apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\n"), 0o600)).To(Succeed())
	_, err = devenv.Apply(context.Background(), env.Client, unknown)
	g.Expect(err).To(MatchError(ContainSubstring("document 1 (Gadget g): unknown kind Gadget in example.com/v1")))
}

func TestApplyIsRepeatable(t *testing.T) {
	g := NewWithT(t)
	n, err := devenv.Apply(context.Background(), env.Client, filepath.Join(dir, "manifests"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(n).To(Equal(5))
}

// syncBuffer is a bytes.Buffer safe to write from the simulator's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
