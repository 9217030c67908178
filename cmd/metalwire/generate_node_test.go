package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blang/semver/v4"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/cloudinit"
	kubeadmtypes "sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/types"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/types/upstream"
	"sigs.k8s.io/yaml"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	"github.com/metalwire/metalwire/internal/simulator"
	"github.com/metalwire/metalwire/internal/testneeds"
	"github.com/metalwire/metalwire/pkg/generate"
)

// Phase 2 on the node, with its real consumers. For each host of the seed's example, the
// bootstrap configuration `metalwire generate --templates` prints (the controllers'
// KubeadmControlPlane, the node pool's KubeadmConfigTemplate) becomes the bootstrap cloud-config
// through Cluster API's kubeadm bootstrap provider's own code (sigs.k8s.io/cluster-api's
// bootstrap/kubeadm/pkg/cloudinit and pkg/types, as its KubeadmConfig reconciler calls them); the
// host's metaData is rendered by `metalwire render --format metadata` (the data controller's
// code) and laid over BMO's defaults into meta_data.json (the simulator's BMO stand-in); both go
// onto a config drive that cloud-init's ConfigDrive datasource reads; `cloud-init devel render`
// renders the cloud-config's Jinja2 with the instance data that datasource wrote; and cloud-init's
// own write_files module writes the files (under a temporary root) and its runcmd module's
// shellify gives the script the node runs. The files must be byte for byte those phase 1's
// KubeadmConfig writes for the node with the same addresses, and the script must run
// os-net-config (netplan apply) before kubeadm.

// cloudInitScript runs cloud-init's own Python code: "datasource DRIVE RUN" reads a config drive
// with the ConfigDrive datasource, which writes RUN/instance-data.json as on a booting host;
// "apply CLOUD_CONFIG ROOT" writes the cloud-config's write_files below ROOT with the write_files
// module and prints the runcmd script.
const cloudInitScript = `
import sys
from cloudinit import helpers, settings, util
from cloudinit.config import cc_write_files
from cloudinit.sources import DataSourceConfigDrive

if sys.argv[1] == "datasource":
    drive, run = sys.argv[2], sys.argv[3]
    paths = helpers.Paths({"cloud_dir": run + "/cloud", "run_dir": run})
    ds = DataSourceConfigDrive.DataSourceConfigDrive(settings.CFG_BUILTIN, None, paths)
    ds.seed_dir = drive
    if not ds.get_data():
        sys.exit("cloud-init's ConfigDrive datasource found no config drive in " + drive)
else:
    with open(sys.argv[2]) as f:
        cfg = util.load_yaml(f.read())
    if not isinstance(cfg, dict):
        sys.exit("the rendered user data is not a cloud-config map")
    root = sys.argv[3]
    files = [dict(f, path=root + f["path"]) for f in cfg.get("write_files", [])]
    cc_write_files.write_files("write_files", files, "root:root")
    sys.stdout.write(util.shellify(cfg["runcmd"]))
`

// cloudInitPython is the interpreter cloud-init runs with (its script's #! line), so that its
// modules import.
func cloudInitPython(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("cloud-init")
	if err != nil {
		testneeds.Missing(t, "cloud-init is not installed (make test installs the Debian package cloud-init)")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	line, _ := bufio.NewReader(f).ReadString('\n')
	python, ok := strings.CutPrefix(strings.TrimSpace(line), "#!")
	if !ok {
		t.Fatalf("%s has no #! line naming its Python", path)
	}
	return strings.Fields(python)[0]
}

func TestPhase2BootstrapWritesPhase1FilesOnTheNode(t *testing.T) {
	python := cloudInitPython(t)
	script := writeFile(t, "cloudinit_steps.py", cloudInitScript)
	seed, err := os.ReadFile(seedFile)
	if err != nil {
		t.Fatal(err)
	}
	f, err := generate.Parse(seed)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{generate.FormatOSNetConfig, generate.FormatNetplan} {
		t.Run(format, func(t *testing.T) {
			g := NewWithT(t)
			opts := generate.Options{Cluster: "demo", Namespace: "metal3", KubernetesVersion: "v1.34.1", Format: format,
				ImageURL: "http://images.example.com/ubuntu.qcow2", ImageChecksum: "http://images.example.com/ubuntu.qcow2.sha256sum"}
			phase1, err := f.Generate(generate.State{}, opts)
			g.Expect(err).NotTo(HaveOccurred())

			out, code := run(context.Background(), "generate", "--templates", "-f", seedFile, "--cluster", "demo", "-n", "metal3",
				"--kubernetes-version", "v1.34.1", "--format", format)
			g.Expect(code).To(Equal(0), out)
			docs := map[string]string{} // kind/name -> document
			for _, doc := range strings.Split(out, "---\n") {
				u := &unstructured.Unstructured{}
				g.Expect(yaml.Unmarshal([]byte(doc), &u.Object)).To(Succeed())
				docs[u.GetKind()+"/"+u.GetName()] = doc
			}

			for _, node := range phase1.Nodes {
				t.Run(node.Node.Name, func(t *testing.T) {
					g := NewWithT(t)
					unit := "demo-" + node.Unit.Name
					userData := bootstrapCloudConfig(t, docs, node, unit)
					metaData := hostMetaDataJSON(t, docs["Metal3DataTemplate/"+unit], node, f)
					root, runcmd := bootOnConfigDrive(t, python, script, metaData, userData)

					// What phase 1's KubeadmConfig for this node writes and runs.
					kc := node.Objects[0]
					g.Expect(kc.GetKind()).To(Equal("KubeadmConfig"))
					files, _, _ := unstructured.NestedSlice(kc.Object, "spec", "files")
					g.Expect(files).NotTo(BeEmpty())
					for _, file := range files {
						path := file.(map[string]any)["path"].(string)
						want := file.(map[string]any)["content"].(string)
						got, err := os.ReadFile(filepath.Join(root, path))
						g.Expect(err).NotTo(HaveOccurred(), "cloud-init wrote no %s", path)
						g.Expect(string(got)).To(Equal(want), "%s on the node, phase 2 against phase 1", path)
						if path == generate.MappingPath {
							g.Expect(string(got)).To(ContainSubstring(node.Node.Mapping["em0"]), "%s maps the node's own NICs", path)
						} else {
							g.Expect(string(got)).To(ContainSubstring(node.Addresses["net0"].String()+"/24"), "%s holds the node's own address", path)
						}
					}
					commands, _, _ := unstructured.NestedStringSlice(kc.Object, "spec", "preKubeadmCommands")
					network := strings.Index(runcmd, commands[0])
					kubeadm := strings.Index(runcmd, "kubeadm ")
					g.Expect(network).To(BeNumerically(">=", 0), "the runcmd script runs %q:\n%s", commands[0], runcmd)
					g.Expect(kubeadm).To(BeNumerically(">", network), "%q runs before kubeadm:\n%s", commands[0], runcmd)
				})
			}
		})
	}
}

// bootstrapCloudConfig is the user data Cluster API's kubeadm bootstrap provider writes for the
// node from its unit's bootstrap configuration: the first controller initialises the control
// plane from the KubeadmControlPlane's kubeadmConfigSpec, a node pool's node joins with its
// KubeadmConfigTemplate's spec. The provider's reconciler passes spec.files (contentFrom
// resolved; none here) and spec.preKubeadmCommands to these same functions.
func bootstrapCloudConfig(t *testing.T, docs map[string]string, node *generate.NodeOutput, name string) []byte {
	t.Helper()
	g := NewWithT(t)
	version := semver.MustParse("1.34.1")
	var out []byte
	var err error
	if node.Unit.ControlPlane {
		kcp := &controlplanev1.KubeadmControlPlane{}
		g.Expect(decodeStrictly(docs["KubeadmControlPlane/"+name], kcp)).To(Succeed())
		spec := kcp.Spec.KubeadmConfigSpec
		cluster, err := kubeadmtypes.MarshalClusterConfigurationForVersion(&spec.ClusterConfiguration, version,
			&upstream.AdditionalData{KubernetesVersion: &kcp.Spec.Version, ClusterName: ptr.To("demo")})
		g.Expect(err).NotTo(HaveOccurred())
		initConfig, err := kubeadmtypes.MarshalInitConfigurationForVersion(&spec.InitConfiguration, version)
		g.Expect(err).NotTo(HaveOccurred())
		out, err = cloudinit.NewInitControlPlane(&cloudinit.ControlPlaneInput{
			BaseUserData:         cloudinit.BaseUserData{AdditionalFiles: spec.Files, PreKubeadmCommands: spec.PreKubeadmCommands, KubernetesVersion: version},
			ClusterConfiguration: cluster, InitConfiguration: initConfig,
		})
		g.Expect(err).NotTo(HaveOccurred())
	} else {
		kct := &bootstrapv1.KubeadmConfigTemplate{}
		g.Expect(decodeStrictly(docs["KubeadmConfigTemplate/"+name], kct)).To(Succeed())
		spec := kct.Spec.Template.Spec
		join, err := kubeadmtypes.MarshalJoinConfigurationForVersion(&spec.JoinConfiguration, version)
		g.Expect(err).NotTo(HaveOccurred())
		out, err = cloudinit.NewNode(&cloudinit.NodeInput{
			BaseUserData:      cloudinit.BaseUserData{AdditionalFiles: spec.Files, PreKubeadmCommands: spec.PreKubeadmCommands, KubernetesVersion: version},
			JoinConfiguration: join,
		})
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(out)).To(HavePrefix("## template: jinja\n"), "the provider marks its cloud-config for cloud-init's Jinja2")
	g.Expect(string(out)).To(ContainSubstring("{{ ds.meta_data."), "the files come from the metaData")
	return out
}

// decodeStrictly reads a manifest into Cluster API's type, refusing fields the type lacks: a
// field the provider would not see must fail the test.
func decodeStrictly(doc string, into runtime.Object) error {
	return yaml.UnmarshalStrict([]byte(doc), into)
}

// hostMetaDataJSON renders the unit's Metal3DataTemplate for a host with the node's MACs (under
// kernel names that are not the aliases) and the node's addresses, as the data controller does,
// and makes the host's meta_data.json from it as BMO does.
func hostMetaDataJSON(t *testing.T, template string, node *generate.NodeOutput, f *generate.File) []byte {
	t.Helper()
	g := NewWithT(t)
	g.Expect(template).NotTo(BeEmpty())
	host := &bmov1.BareMetalHost{}
	host.APIVersion, host.Kind = bmov1.GroupVersion.String(), "BareMetalHost"
	host.Name, host.Namespace, host.UID = "rack1-"+node.Node.Name, "metal3", types.UID("7a4b-"+node.Node.Name)
	host.Status.HardwareDetails = &bmov1.HardwareDetails{}
	for alias, mac := range node.Node.Mapping {
		host.Status.HardwareDetails.NIC = append(host.Status.HardwareDetails.NIC, bmov1.NIC{Name: "eno" + strings.TrimPrefix(alias, "em"), MAC: mac})
	}
	hostYAML, err := yaml.Marshal(host)
	g.Expect(err).NotTo(HaveOccurred())
	var pools bytes.Buffer
	for net, a := range node.Addresses {
		n := f.Networks[net]
		entry := map[string]any{generate.PoolName("demo", net): map[string]any{"address": a.String(), "prefix": n.Netmask, "gateway": n.Gateway, "dnsServers": n.DNSServers}}
		b, err := yaml.Marshal(entry)
		g.Expect(err).NotTo(HaveOccurred())
		pools.Write(b)
	}
	md, code := run(context.Background(), "render", "--format", "metadata", "--metal3machine", "demo-"+node.Node.Name,
		"--template", writeFile(t, "template.yaml", template), "--host", writeFile(t, "host.yaml", string(hostYAML)),
		"--pools", writeFile(t, "pools.yaml", pools.String()))
	g.Expect(code).To(Equal(0), md)
	out, err := simulator.MetaDataJSON(host, []byte(md))
	g.Expect(err).NotTo(HaveOccurred())
	return out
}

// bootOnConfigDrive puts meta_data.json and the user data on a config drive, has cloud-init
// read it and render the user data, and applies the result: it returns the root the files were
// written under and the runcmd script.
func bootOnConfigDrive(t *testing.T, python, script string, metaData, userData []byte) (string, string) {
	t.Helper()
	g := NewWithT(t)
	dir := t.TempDir()
	drive := filepath.Join(dir, "config-2")
	latest := filepath.Join(drive, "openstack", "latest")
	g.Expect(os.MkdirAll(latest, 0o750)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(latest, "meta_data.json"), metaData, 0o600)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(latest, "user_data"), userData, 0o600)).To(Succeed())
	runDir := filepath.Join(dir, "run")

	b, err := exec.Command(python, script, "datasource", drive, runDir).CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "cloud-init's datasource: %s", b)
	rendered, stderr, err := output("cloud-init", "devel", "render", "-i", filepath.Join(runDir, "instance-data.json"), filepath.Join(latest, "user_data"))
	g.Expect(err).NotTo(HaveOccurred(), "cloud-init devel render: %s", stderr)
	g.Expect(string(rendered)).To(HavePrefix("#cloud-config\n"), "cloud-init took the Jinja2 header and rendered the rest")
	g.Expect(string(rendered)).NotTo(Or(ContainSubstring("{{"), ContainSubstring("CI_MISSING_JINJA_VAR")), "every {{ ds.meta_data.<key> }} was found:\n%s", rendered)
	cloudConfig := filepath.Join(dir, "cloud-config.yaml")
	g.Expect(os.WriteFile(cloudConfig, rendered, 0o600)).To(Succeed())

	root := filepath.Join(dir, "root")
	runcmd, stderr, err := output(python, script, "apply", cloudConfig, root)
	g.Expect(err).NotTo(HaveOccurred(), "cloud-init's write_files: %s", stderr)
	return root, string(runcmd)
}

// output runs a command and returns its standard output and error apart.
func output(name string, args ...string) ([]byte, string, error) {
	var stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	return out, stderr.String(), err
}
