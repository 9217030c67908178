package generateapply_test

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/metalwire/metalwire/internal/generateapply"
	"github.com/metalwire/metalwire/pkg/generate"
	"github.com/metalwire/metalwire/pkg/render/osnetconfig"
)

func options(ns string) generate.Options {
	return generate.Options{Cluster: "demo", Namespace: ns, ImageURL: "http://img/ubuntu.qcow2", ImageChecksum: "http://img/ubuntu.qcow2.sha256sum"}
}

// pool is a file with one node pool of n nodes on one /24.
func pool(t *testing.T, name string, n int, macByte int) *generate.File {
	t.Helper()
	var b strings.Builder
	b.WriteString("infra:\n  networks:\n    net0:\n      netmask: 24\n      addressRange: {start: 10.0.0.10, end: 10.0.0.250}\n      gateway: 10.0.0.1\n")
	fmt.Fprintf(&b, "nodepools:\n  %s:\n    replicas: %d\n    hostSelector: {pool: %s}\n", name, n, name)
	b.WriteString("    networkConfig:\n      - type: interface\n        name: em0\n        addresses:\n          - ip_netmask: {{ ip['net0'] }}\n    macMapping:\n")
	for i := range n {
		fmt.Fprintf(&b, "      node-%d: {em0: \"52:54:%02x:00:00:%02x\"}\n", i, macByte, i)
	}
	f, err := generate.Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func stateOf(t *testing.T, ns string) generate.State {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "demo-ip-state"}, cm); err != nil {
		t.Fatal(err)
	}
	s, err := generateapply.DecodeState(cm.Data)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTwoGeneratorsAtOnceNeverShareAnAddress(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	files := []*generate.File{pool(t, "a", 50, 1), pool(t, "b", 50, 2)}
	var wg sync.WaitGroup
	sums := make([]*generateapply.Summary, 2)
	errs := make([]error, 2)
	outs := make([]bytes.Buffer, 2)
	for i := range files {
		wg.Go(func() {
			sums[i], errs[i] = generateapply.Run(ctx, env.Client, generateapply.Options{File: files[i], Generate: options(ns), Out: &outs[i]})
		})
	}
	wg.Wait()
	for i := range files {
		g.Expect(errs[i]).NotTo(HaveOccurred(), outs[i].String())
		g.Expect(sums[i].Nodes).To(Equal(50))
		g.Expect(sums[i].Given).To(Equal(50))
	}
	t.Logf("attempts: %d and %d", sums[0].Attempts, sums[1].Attempts)

	state := stateOf(t, ns)
	g.Expect(state["net0"]).To(HaveLen(100))
	seen := map[netip.Addr]string{}
	for node, a := range state["net0"] {
		g.Expect(seen).NotTo(HaveKey(a), "%s and %s both hold %s", node, seen[a], a)
		seen[a] = node
	}
	// What was applied agrees with the state: each KubeadmConfig carries its node's address.
	kcs := &unstructured.UnstructuredList{}
	kcs.SetGroupVersionKind(schema.GroupVersionKind{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta2", Kind: "KubeadmConfigList"})
	g.Expect(env.Client.List(ctx, kcs, client.InNamespace(ns))).To(Succeed())
	g.Expect(kcs.Items).To(HaveLen(100))
	for _, kc := range kcs.Items {
		node := strings.TrimPrefix(kc.GetName(), "demo-")
		files, _, _ := unstructured.NestedSlice(kc.Object, "spec", "files")
		content := files[0].(map[string]any)["content"].(string)
		g.Expect(osnetconfig.Validate([]byte(content))).To(Succeed())
		g.Expect(content).To(ContainSubstring("ip_netmask: " + state["net0"][node].String() + "/24"))
	}
	g.Expect(outs[0].String()).To(ContainSubstring("[50/50] a-node-49: net0 "))
	g.Expect(outs[0].String()).To(ContainSubstring("50 node(s), 50 address(es) given, 0 kept; state in ConfigMap " + ns + "/demo-ip-state"))
}

func TestSecondRunChangesNothing(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	ctx := context.Background()
	f := pool(t, "a", 3, 1)
	_, err := generateapply.Run(ctx, env.Client, generateapply.Options{File: f, Generate: options(ns), Out: &bytes.Buffer{}})
	g.Expect(err).NotTo(HaveOccurred())
	cm := &corev1.ConfigMap{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "demo-ip-state"}, cm)).To(Succeed())
	g.Expect(cm.Data["net0"]).To(Equal("a-node-0: 10.0.0.10\na-node-1: 10.0.0.11\na-node-2: 10.0.0.12\n"), "the seed's shape: node: address")

	var out bytes.Buffer
	sum, err := generateapply.Run(ctx, env.Client, generateapply.Options{File: f, Generate: options(ns), Out: &out})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sum.Given).To(Equal(0))
	g.Expect(sum.Kept).To(Equal(3))
	after := &corev1.ConfigMap{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "demo-ip-state"}, after)).To(Succeed())
	g.Expect(after.ResourceVersion).To(Equal(cm.ResourceVersion), "the state was not written again")
	g.Expect(out.String()).To(ContainSubstring("3 node(s), 0 address(es) given, 3 kept"))
}

func TestDeleteThenANewNodeReusesTheAddress(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	ctx := context.Background()
	_, err := generateapply.Run(ctx, env.Client, generateapply.Options{File: pool(t, "a", 3, 1), Generate: options(ns), Out: &bytes.Buffer{}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(stateOf(t, ns)["net0"]).To(HaveKeyWithValue("a-node-1", netip.MustParseAddr("10.0.0.11")))

	// Its Machine still exists: the addresses stay.
	_, err = generateapply.Run(ctx, env.Client, generateapply.Options{Generate: options(ns), Delete: []string{"a-node-1"}, Out: &bytes.Buffer{}})
	g.Expect(err).To(MatchError(ContainSubstring("Machine " + ns + "/demo-a-node-1 still exists; delete it first")))

	m := &unstructured.Unstructured{}
	m.SetGroupVersionKind(schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Machine"})
	m.SetNamespace(ns)
	m.SetName("demo-a-node-1")
	g.Expect(env.Client.Delete(ctx, m)).To(Succeed())

	var dry bytes.Buffer
	_, err = generateapply.Run(ctx, env.Client, generateapply.Options{Generate: options(ns), Delete: []string{"a-node-1"}, DryRun: true, Out: &dry})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(dry.String()).To(ContainSubstring("would change ConfigMap " + ns + "/demo-ip-state: net0: free 10.0.0.11 from a-node-1"))
	g.Expect(stateOf(t, ns)["net0"]).To(HaveKey("a-node-1"), "a dry run changes nothing")

	var out bytes.Buffer
	sum, err := generateapply.Run(ctx, env.Client, generateapply.Options{Generate: options(ns), Delete: []string{"a-node-1"}, Out: &out})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sum.Freed).To(Equal(1))
	g.Expect(stateOf(t, ns)["net0"]).NotTo(HaveKey("a-node-1"))

	// The pool now maps node-0, node-2 and a new node-3: node-3 gets the freed address.
	f := pool(t, "a", 4, 1)
	f.Units[0].Nodes = append(f.Units[0].Nodes[:1], f.Units[0].Nodes[2:]...)
	_, err = generateapply.Run(ctx, env.Client, generateapply.Options{File: f, Generate: options(ns), Out: &bytes.Buffer{}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(stateOf(t, ns)["net0"]).To(Equal(map[string]netip.Addr{
		"a-node-0": netip.MustParseAddr("10.0.0.10"), "a-node-2": netip.MustParseAddr("10.0.0.12"), "a-node-3": netip.MustParseAddr("10.0.0.11")}))

	_, err = generateapply.Run(ctx, env.Client, generateapply.Options{Generate: options(ns), Delete: []string{"a-node-9"}, Out: &bytes.Buffer{}})
	g.Expect(err).To(MatchError(ContainSubstring("--delete a-node-9: the node holds no address in the state; nodes holding some: a-node-0, a-node-2, a-node-3")))
}

func TestDryRunAndOutputDirApplyNothing(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	ctx := context.Background()
	var dry bytes.Buffer
	_, err := generateapply.Run(ctx, env.Client, generateapply.Options{File: pool(t, "a", 2, 1), Generate: options(ns), DryRun: true, Out: &dry})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(dry.String()).To(ContainSubstring("would change ConfigMap " + ns + "/demo-ip-state: net0: a-node-0 gets 10.0.0.10"))
	g.Expect(dry.String()).To(ContainSubstring("[1/2] a-node-0: net0 10.0.0.10; would apply KubeadmConfig, Metal3Machine, Machine demo-a-node-0"))
	g.Expect(dry.String()).To(ContainSubstring("dry run, nothing changed"))
	cm := &corev1.ConfigMap{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "demo-ip-state"}, cm)).NotTo(Succeed())

	dir := t.TempDir()
	var out bytes.Buffer
	_, err = generateapply.Run(ctx, env.Client, generateapply.Options{File: pool(t, "a", 2, 1), Generate: options(ns), OutDir: dir, Out: &out})
	g.Expect(err).NotTo(HaveOccurred())
	data, err := os.ReadFile(filepath.Join(dir, "a-node-1.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(data)).To(ContainSubstring("ip_netmask: 10.0.0.11/24"))
	machines := &unstructured.UnstructuredList{}
	machines.SetGroupVersionKind(schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "MachineList"})
	g.Expect(env.Client.List(ctx, machines, client.InNamespace(ns))).To(Succeed())
	g.Expect(machines.Items).To(BeEmpty(), "-o writes files instead of applying")
	g.Expect(stateOf(t, ns)["net0"]).To(HaveLen(2), "the addresses are still recorded")
}
