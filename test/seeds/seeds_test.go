package seeds_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/internal/testenv"
	"github.com/metalwire/metalwire/pkg/migrate"
)

var env *testenv.Env

// The conversion webhooks run so that every infrastructure document that applies is also
// checked written as CAPM3's v1beta1 (checkAsV1beta1).
func TestMain(m *testing.M) { testenv.MainWith(m, &env, testenv.Options{ServeConversion: true}) }

// outcome is what happens to one document after migrate.
type outcome int

const (
	// applies: migrate leaves nothing to the user and the API server accepts the result.
	applies outcome = iota
	// refused: migrate says nothing, the API server refuses the result naming field. For
	// errors in the seed that only admission can see.
	refused
	// needsUser: migrate names field in a "must change" note; when the kind is served, the
	// API server refuses the migrated document as well (so the note is not a false alarm).
	needsUser
	// notOurKind: a fragment or a kind no installed CRD serves; migrate names field.
	notOurKind
)

func (o outcome) String() string {
	return [...]string{"applies", "refused", "needs-user", "not-our-kind"}[o]
}

// want is the expected fate of one document.
type want struct {
	object  string  // Kind/name as migrate names it
	outcome outcome // what happens
	field   string  // the field migrate or the API server names
	why     string  // for the reader of the table
	// apiSays, for needs-user, is what the refusal must contain: the field (and, where it
	// tells the reasons apart, the complaint), so the row fails if the object is refused for
	// another reason than the one migrate names.
	apiSays string
}

// userFix is what a user does after reading migrate's notes: text replacements in the
// migrated document, each of which must apply, and what happens then.
type userFix struct {
	replace [][2]string
	outcome outcome // applies, or refused naming field
	field   string
}

// fixes says, per fixture and document number (from 1), how following migrate's advice ends:
// the notes are only useful if doing what they say makes the object apply.
var fixes = map[string]map[int][]userFix{
	"000-05-machine.yaml": {1: {{replace: [][2]string{{"version: 1.16", `version: "v1.16.15"`}}, outcome: applies}}},
	"000-10-metal3machine.yaml": {1: {
		// A list, still with the seed's typographic quotes: refused, naming the field.
		{replace: [][2]string{{"{‘abc’: null, ‘123’: null, ‘value2’: null}", "[‘abc’, ‘123’, ‘value2’]"}}, outcome: refused, field: "spec.hostSelector.matchExpressions[0].values"},
		// The list migrate suggests.
		{replace: [][2]string{{"{‘abc’: null, ‘123’: null, ‘value2’: null}", `["abc", "123", "value2"]`}}, outcome: applies},
	}},
	"000-11-machinedeployment.yaml":     {1: {{replace: [][2]string{{"version: 1.16", `version: "v1.16.15"`}}, outcome: applies}}},
	"000-13-metal3machinetemplate.yaml": {1: {{replace: [][2]string{{"{‘abc’: null, ‘123’: null, ‘value2’: null}", `["abc", "123", "value2"]`}}, outcome: applies}}},
	// clusterName is optional in our CRD: replacing the placeholder MACs is all it takes.
	"000-14-metal3datatemplate.yaml": {1: {{replace: [][2]string{
		{"XX:XX:XX:XX:XX:XX", "00:11:22:33:44:55"},
		{"YY:YY:YY:YY:YY:YY", "00:11:22:33:44:66"},
	}, outcome: applies}}},
	"001-02-provisioning-multi.yaml": {
		2: {{replace: [][2]string{
			{"    networks:\n", "    links:\n      ethernets: [{type: phy, id: eth0, macAddress: {fromHostInterface: eth0}}]\n    networks:\n"},
			{"- id: eth0\n", "- id: eth0\n          link: eth0\n"},
		}, outcome: applies}},
		3: {{replace: [][2]string{{"      dataTemplate:", "      image: {url: http://images.example.com/ubuntu.qcow2, checksum: http://images.example.com/ubuntu.qcow2.sha256sum}\n      dataTemplate:"}}, outcome: applies}},
		4: {{replace: [][2]string{
			{"  template:\n", "  selector: {matchLabels: {cluster.x-k8s.io/cluster-name: cluster}}\n  template:\n"},
			{"      clusterName: cluster\n", "      clusterName: cluster\n      bootstrap: {configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfigTemplate, name: md-0}}\n"},
		}, outcome: applies}},
	},
	"003-02-networkdevice-fragment.yaml":  {1: {{replace: [][2]string{{"networkOS: fos", "networkOS: openvswitch-ssh"}, {"networkOS: fos", "networkOS: openvswitch-ssh"}}, outcome: applies}}},
	"003-03-clusternetwork-fragment.yaml": {1: {{replace: [][2]string{{"  networkDeviceRef: nd1", "  networkDeviceRef: nd1\n  vlanRange: 1000-1999"}}, outcome: applies}}},
	"004-01-packetcluster-fragment.yaml":  {1: {{replace: [][2]string{{"projectID: your-packet-project-id", "projectID: 0c2a5f3e-4b6d-4e7f-8a9b-1c2d3e4f5a6b"}}, outcome: applies}}},
	"003-04-nic-fragment.yaml":            {1: {{replace: [][2]string{{"port: 2\n      capability:\n        speed: 1500", "port: 3\n      capability:\n        speed: 1500"}}, outcome: applies}}},
	"001-03-preprovisioning-common-pool-multi.yaml": {
		2: {{replace: [][2]string{
			{"    networks:\n", "    links:\n      ethernets: [{type: phy, id: eth0, macAddress: {fromHostInterface: eth0}}]\n    networks:\n"},
			{"- id: eth0\n", "- id: eth0\n          link: eth0\n"},
		}, outcome: applies}},
		3: {{replace: [][2]string{{"metadata:\n", "metadata:\n  name: host-0\n"}}, outcome: applies}},
	},
}

var table = []struct {
	fixture string
	docs    []want
}{
	{"000-01-cluster.yaml", []want{{"Cluster/cluster", applies, "", "references become {apiGroup, kind, name}", ""}}},
	{"000-02-metal3cluster.yaml", []want{{"Metal3Cluster/m3cluster", applies, "", "noCloudProvider: true -> cloudProviderEnabled: false", ""}}},
	{"000-03-kubeadmcontrolplane.yaml", []want{{"KubeadmControlPlane/m3cluster-controlplane", applies, "", "infrastructureTemplate -> machineTemplate.spec.infrastructureRef; extraArgs -> lists", ""}}},
	{"000-04-kubeadmconfig.yaml", []want{{"KubeadmConfig/controlplane-0", applies, "", "kubeletExtraArgs -> list", ""}}},
	{"000-05-machine.yaml", []want{{"Machine/controlplane-0", needsUser, "spec.version", "version: 1.16 is a number, not a Kubernetes version", "spec.version"}}},
	{"000-06-hostselector-fragment.yaml", []want{{"document 1", notOurKind, "spec.providerSpec.value.hostSelector", "a fragment without apiVersion/kind", ""}}},
	{"000-07-hostselector-fragment.yaml", []want{{"document 1", notOurKind, "spec.providerSpec.value.hostSelector", "a fragment without apiVersion/kind", ""}}},
	{"000-08-hostselector-fragment.yaml", []want{{"document 1", notOurKind, "spec.providerSpec.value.hostSelector.matchExpressions[0].values[0]", "a fragment, with typographic quotes", ""}}},
	{"000-09-hostselector-fragment.yaml", []want{{"document 1", notOurKind, "spec.providerSpec.value.hostSelector.matchExpressions[0].values[0]", "a fragment, with typographic quotes", ""}}},
	{"000-10-metal3machine.yaml", []want{{"Metal3Machine/controlplane-0", needsUser, "spec.hostSelector.matchExpressions[0].values", "values written as a set of typographically quoted strings", "spec.hostSelector.matchExpressions[0].values"}}},
	{"000-11-machinedeployment.yaml", []want{{"MachineDeployment/md-0", needsUser, "spec.template.spec.version", "version: 1.16 is a number, not a Kubernetes version", "spec.template.spec.version"}}},
	{"000-12-kubeadmconfigtemplate.yaml", []want{{"KubeadmConfigTemplate/md-0", applies, "", "kubeletExtraArgs -> list", ""}}},
	{"000-13-metal3machinetemplate.yaml", []want{{"Metal3MachineTemplate/md-0", needsUser, "spec.template.spec.hostSelector.matchExpressions[0].values", "values written as a set of typographically quoted strings", "spec.template.spec.hostSelector.matchExpressions[0].values"}}},
	{"000-14-metal3datatemplate.yaml", []want{{"Metal3DataTemplate/nodepool-1", needsUser, "spec.networkData.links.bonds[0].macAddress.string", "placeholder MACs XX:XX:... (no clusterName is only a warning: optional in our CRD)", `spec.networkData.links.bonds[0].macAddress.string: Invalid value: "XX:XX:XX:XX:XX:XX"`}}},
	{"000-15-metal3data.yaml", []want{{"Metal3Data/nodepool-1-0", needsUser, "spec.metal3Machine", "Metal3Data is the controller's output now (spec.claim, spec.template)", "spec.metal3Machine"}}},
	{"001-01-annotation-fragment.yaml", []want{{"document 1", notOurKind, "", "one annotation, not an object", ""}}},
	{"001-02-provisioning-multi.yaml", []want{
		{"IPPool/pool-1", applies, "", "namePrefix filled with the pool's name", ""},
		{"Metal3DataTemplate/data-template", needsUser, "spec.networkData.networks.ipv4[0].link", "the seed leaves out the network's link", "spec.networkData.networks.ipv4[0].link"},
		{"Metal3MachineTemplate/machine-template", needsUser, "spec.template.spec.image", "the seed leaves out the image", "spec.template.spec.image.url: Required value"},
		{"MachineDeployment/machine-deployment", needsUser, "spec.template.spec.bootstrap", "the seed leaves out bootstrap and selector", "spec.template.spec.bootstrap"},
	}},
	{"001-03-preprovisioning-common-pool-multi.yaml", []want{
		{"IPPool/pool-1", applies, "", "namePrefix filled with the pool's name", ""},
		{"Metal3PreprovisioningDataTemplate/preprov-data-template", needsUser, "spec.preprovisioningNetworkData.networks.ipv4[0].link", "the seed leaves out the network's link", "spec.preprovisioningNetworkData.networks.ipv4[0].link"},
		{"BareMetalHost/(unnamed, document 3)", needsUser, "metadata.name", "the seed shows only the annotation (served by config/crd/dev)", "resource name may not be empty"},
	}},
	{"001-04-preprovisioning-decoupled-pool-multi.yaml", []want{
		{"IPPool/pool-1", applies, "", "namePrefix filled with the pool's name", ""},
		{"IPPool/preprovisioning-pool", applies, "", "a pool with no cluster; namePrefix filled", ""},
		{"Metal3PreprovisioningDataTemplate/preprov-data-template", needsUser, "spec.preprovisioningNetworkData.networks.ipv4[0].link", "the seed leaves out the network's link", "spec.preprovisioningNetworkData.networks.ipv4[0].link"},
		{"Metal3DataTemplate/data-template", needsUser, "spec.networkData.networks.ipv4[0].link", "the seed leaves out the network's link", "spec.networkData.networks.ipv4[0].link"},
		{"Metal3MachineTemplate/machine-template", needsUser, "spec.template.spec.image", "the seed leaves out the image", "spec.template.spec.image.url: Required value"},
		{"BareMetalHost/(unnamed, document 6)", needsUser, "metadata.name", "the seed shows only the annotation (served by config/crd/dev)", "resource name may not be empty"},
	}},
	// Seed 003 (the fabric): "Spec: ... clusterNetwork: CN1 ..." is prose, not YAML.
	{"003-01-metal3cluster-fragment.yaml", nil},
	{"003-02-networkdevice-fragment.yaml", []want{
		{"NetworkDevice/nd1", needsUser, "spec.switches[0].networkOS", "fos has no driver; inline user/pwd moved to Secrets", `spec.switches[0].networkOS: Unsupported value: "fos"`},
		{"Secret/nd1-switch1-credentials", applies, "", "switch1's inline credentials", ""},
		{"Secret/nd1-switch2-credentials", applies, "", "switch2's inline credentials", ""},
	}},
	{"003-03-clusternetwork-fragment.yaml", []want{{"ClusterNetwork/cn1", needsUser, "spec.vlanRange", "the seed gives no VLAN range", "spec.vlanRange: Required value"}}},
	{"003-04-nic-fragment.yaml", []want{{"NIC/nic0", needsUser, "spec.nics[3].networkDevice.switch", "the seed cables two cards to switch2 port 2", "two network cards are cabled to one switch port"}}},
	// Seed 004 (layer 2 on Equinix Metal): CAPP's kinds become metalwire's.
	{"004-01-packetcluster-fragment.yaml", []want{
		{"NetworkDevice/example-packet-cluster", needsUser, "spec.switches[0].equinixMetal.projectID", "the project is a placeholder, not a UUID; the cluster's networks name no VXLAN (noted here too)", "spec.switches[0].equinixMetal.projectID"},
		{"IPPool/example-packet-cluster-storage-vlan-1", applies, "", "networks[0] (assignment cluster-api): its range", ""},
		{"ClusterNetwork/example-packet-cluster", refused, "spec.vlanRange", "no VXLAN in the seed's PacketCluster: the NetworkDevice's notes say to pin it and set vlanRange", ""},
	}},
	{"004-02-packetmachinetemplate-multi.yaml", []want{
		{"Metal3DataTemplate/example-packet-machine-template", applies, "", "bond0 + VLAN sub-interface bond0.1000, address from the pool, the route", ""},
		{"IPPool/example-packet-machine-template-1000", applies, "", "10.60.10.0/24 without network, gateway, broadcast", ""},
		{"Metal3DataTemplate/example-packet-machine-template-1", applies, "", "the second template, split from the first (the seed has no ---)", ""},
		{"IPPool/example-packet-machine-template-1-1001", applies, "", "10.60.20.0/24", ""},
	}},
	{"004-03-configmap.yaml", []want{{"ConfigMap/capp-ip-allocations", needsUser, "", "CAPP's bookkeeping; metalwire's claims are the truth (the seed also writes Data capitalised)", ".Data: field not declared in schema"}}},
}

func TestEveryFixtureIsInTheTable(t *testing.T) {
	g := NewWithT(t)
	files, err := filepath.Glob(filepath.Join("..", "fixtures", "seeds", "*.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	var inTable []string
	for _, row := range table {
		inTable = append(inTable, row.fixture)
	}
	var onDisk []string
	for _, f := range files {
		onDisk = append(onDisk, filepath.Base(f))
	}
	g.Expect(inTable).To(ConsistOf(onDisk))
}

func TestSeedExamplesAfterMigrate(t *testing.T) {
	for i, row := range table {
		t.Run(row.fixture, func(t *testing.T) {
			g := NewWithT(t)
			in, err := os.ReadFile(filepath.Join("..", "fixtures", "seeds", row.fixture))
			g.Expect(err).NotTo(HaveOccurred())
			res, err := migrate.Migrate(in)
			if row.docs == nil {
				// The seed's block is not YAML at all ("..." lines standing for elided fields).
				g.Expect(err).To(MatchError(ContainSubstring("is not valid YAML")))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(res.Documents).To(HaveLen(len(row.docs)), "documents in %s", row.fixture)

			ns := createNamespace(t, fmt.Sprintf("seed-%d", i))
			for j, w := range row.docs {
				doc := res.Documents[j]
				t.Run(fmt.Sprintf("%d-%s", j+1, w.outcome), func(t *testing.T) {
					checkDocument(t, doc, w, ns)
				})
				for k, fix := range fixes[row.fixture][j+1] {
					t.Run(fmt.Sprintf("%d-after-user-fix-%d-%s", j+1, k+1, fix.outcome), func(t *testing.T) {
						checkUserFix(t, doc, fix, fmt.Sprintf("%s-fix-%d-%d", ns, j+1, k+1))
					})
				}
			}
		})
	}
}

func checkDocument(t *testing.T, doc migrate.Document, w want, ns string) {
	g := NewWithT(t)
	g.Expect(doc.Object).To(Equal(w.object))
	notes := notePaths(doc.MustChange)

	switch w.outcome {
	case applies, refused:
		g.Expect(notes).To(BeEmpty(), "migrate should leave nothing to the user")
	case needsUser, notOurKind:
		g.Expect(notes).To(ContainElement(HavePrefix(w.field)), "migrate names %s", w.field)
	}
	if w.outcome == notOurKind {
		g.Expect(doc.Kind == "" || !served(doc)).To(BeTrue(), "%s is served; the table should say what applying it does", doc.Object)
		return
	}
	if !served(doc) {
		t.Skipf("no CRD for %s (%s) installed: cannot check %q (%s); the expectation stands for when it is", doc.Kind, doc.APIVersion, w.outcome, w.why)
	}

	err := apply(doc, ns)
	switch w.outcome {
	case applies:
		g.Expect(err).NotTo(HaveOccurred(), "migrated document:\n%s", doc.YAML)
		checkAsV1beta1(t, doc, ns)
	case refused:
		g.Expect(err).To(MatchError(ContainSubstring(w.field)), "migrated document:\n%s", doc.YAML)
	case needsUser:
		g.Expect(err).To(HaveOccurred(), "%s applies as migrated although migrate says %s must change:\n%s", doc.Object, w.field, doc.YAML)
		g.Expect(w.apiSays).NotTo(BeEmpty(), "the table must say why the API server refuses %s", doc.Object)
		g.Expect(err.Error()).To(ContainSubstring(w.apiSays), "refused for the reason migrate gives")
		t.Logf("refused as expected: %v", err)
	}
}

// checkUserFix edits the migrated document as the user would, then checks migrate has nothing
// more to say and the API server answers as the fix expects.
func checkUserFix(t *testing.T, doc migrate.Document, fix userFix, ns string) {
	g := NewWithT(t)
	edited := string(doc.YAML)
	for _, r := range fix.replace {
		g.Expect(edited).To(ContainSubstring(r[0]), "the fix's text is in the migrated document")
		edited = strings.Replace(edited, r[0], r[1], 1)
	}
	res, err := migrate.Migrate([]byte(edited))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Documents).To(HaveLen(1))
	fixed := res.Documents[0]
	if fix.outcome == applies {
		g.Expect(fixed.MustChange).To(BeEmpty(), "after the fix migrate is satisfied:\n%s", edited)
	}
	if !served(fixed) {
		t.Skipf("no CRD for %s (%s) installed: cannot check the fix", fixed.Kind, fixed.APIVersion)
	}
	createNamespace(t, ns)
	err = apply(fixed, ns)
	switch fix.outcome {
	case applies:
		g.Expect(err).NotTo(HaveOccurred(), "fixed document:\n%s", fixed.YAML)
		checkAsV1beta1(t, fixed, ns)
	case refused:
		g.Expect(err).To(MatchError(ContainSubstring(fix.field)), "fixed document:\n%s", fixed.YAML)
	}
}

func notePaths(notes []migrate.Note) []string {
	paths := []string{}
	for _, n := range notes {
		paths = append(paths, n.Path)
	}
	return paths
}

func served(doc migrate.Document) bool {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(doc.APIVersion)
	u.SetKind(doc.Kind)
	_, err := env.Client.RESTMapper().RESTMapping(u.GroupVersionKind().GroupKind(), u.GroupVersionKind().Version)
	if meta.IsNoMatchError(err) {
		return false
	}
	return err == nil
}

// apply server-side applies a migrated document in ns, as `kubectl apply --server-side` does:
// unknown fields are refused, not dropped.
func apply(doc migrate.Document, ns string) error {
	obj := map[string]any{}
	if err := yaml.Unmarshal(doc.YAML, &obj); err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetNamespace(ns)
	return env.Client.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(u),
		client.FieldOwner("seed-table-test"), client.ForceOwnership)
}

func createNamespace(t *testing.T, name string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := env.Client.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	return name
}
