package generate_test

import (
	"bytes"
	"flag"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/metalwire/metalwire/pkg/generate"
	"github.com/metalwire/metalwire/pkg/render/osnetconfig"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden from what the code generates")

var seedOptions = generate.Options{
	Cluster: "demo", Namespace: "metal3", KubernetesVersion: "v1.34.1",
	ImageURL: "http://images.example.com/ubuntu.qcow2", ImageChecksum: "http://images.example.com/ubuntu.qcow2.sha256sum",
}

func readSeed(t *testing.T) *generate.File {
	t.Helper()
	data, err := os.ReadFile("testdata/seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := generate.Parse(data)
	if err != nil {
		t.Fatalf("the seed's example configuration: %v", err)
	}
	return f
}

// golden compares got with testdata/golden/<name>, or writes it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./pkg/generate -update to write it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from what was generated (go test ./pkg/generate -update rewrites it):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

func TestSeedExampleGeneratesBothUnits(t *testing.T) {
	g := NewWithT(t)
	f := readSeed(t)
	g.Expect(f.Units).To(HaveLen(2))
	g.Expect(f.Units[0].HostSelector).To(Equal(map[string]string{"metal3.io/controller": "true"}), "the seed's one-line hostSelector is read as a map")
	g.Expect(f.Units[1].HostSelector).To(Equal(map[string]string{"metal3.io/nodepool": "nodepool1"}))

	res, err := f.Generate(generate.State{}, seedOptions)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Nodes).To(HaveLen(2))
	// net0's range starts at .10; net1 hands out its list in order.
	g.Expect(res.State.Addresses("controllers-node-0")).To(Equal(map[string]netip.Addr{
		"net0": netip.MustParseAddr("192.168.0.10"), "net1": netip.MustParseAddr("192.168.1.10")}))
	g.Expect(res.State.Addresses("nodepool1-node-0")).To(Equal(map[string]netip.Addr{
		"net0": netip.MustParseAddr("192.168.0.11"), "net1": netip.MustParseAddr("192.168.1.11")}))
	g.Expect(res.Changes).To(HaveLen(4))

	for _, n := range res.Nodes {
		g.Expect(osnetconfig.Validate(n.OSNetConfig)).To(Succeed(), n.Node.Name)
		golden(t, n.Node.Name+"/config.yaml", n.OSNetConfig)
		golden(t, n.Node.Name+"/mapping.yaml", n.Mapping)
		manifests, err := n.Manifests()
		g.Expect(err).NotTo(HaveOccurred())
		golden(t, n.Node.Name+"/objects.yaml", manifests)
		plan, err := osnetconfig.Netplan(n.Interfaces, n.Node.Mapping)
		g.Expect(err).NotTo(HaveOccurred())
		golden(t, n.Node.Name+"/netplan.yaml", plan)
	}

	// What a user notices in the node's objects: the files, the command, the pinned host.
	kc, m3m, machine := res.Nodes[0].Objects[0], res.Nodes[0].Objects[1], res.Nodes[0].Objects[2]
	g.Expect(kc.GetKind()).To(Equal("KubeadmConfig"))
	g.Expect(kc.Object["spec"]).To(HaveKeyWithValue("preKubeadmCommands", ConsistOf(generate.OSNetConfigCommand)))
	g.Expect(kc.Object["spec"]).To(HaveKeyWithValue("files", ContainElements(
		HaveKeyWithValue("path", "/etc/os-net-config/config.yaml"),
		HaveKeyWithValue("path", "/etc/os-net-config/mapping.yaml"))))
	g.Expect(m3m.Object["spec"]).To(HaveKeyWithValue("hostSelector", HaveKeyWithValue("matchLabels", map[string]any{
		"metal3.io/controller": "true", generate.NodeLabel: "controllers-node-0"})))
	g.Expect(machine.GetName()).To(Equal("demo-controllers-node-0"))
	g.Expect(machine.GetLabels()).To(HaveKey("cluster.x-k8s.io/control-plane"))
}

func TestSecondRunChangesNothing(t *testing.T) {
	g := NewWithT(t)
	f := readSeed(t)
	first, err := f.Generate(generate.State{}, seedOptions)
	g.Expect(err).NotTo(HaveOccurred())
	second, err := f.Generate(first.State, seedOptions)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(second.Changes).To(BeEmpty())
	g.Expect(second.State).To(Equal(first.State))
	for i := range first.Nodes {
		g.Expect(second.Nodes[i].OSNetConfig).To(Equal(first.Nodes[i].OSNetConfig))
	}
}

func TestNetplanFormatWritesNetplanInsteadOfOSNetConfig(t *testing.T) {
	g := NewWithT(t)
	o := seedOptions
	o.Format = generate.FormatNetplan
	res, err := readSeed(t).Generate(generate.State{}, o)
	g.Expect(err).NotTo(HaveOccurred())
	spec := res.Nodes[0].Objects[0].Object["spec"].(map[string]any)
	g.Expect(spec["files"]).To(ConsistOf(HaveKeyWithValue("path", generate.NetplanPath)))
	g.Expect(spec["preKubeadmCommands"]).To(ConsistOf("netplan apply"))
}

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}
