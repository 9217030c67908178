package metal3data_test

import (
	"context"
	"encoding/base64"
	"net/netip"
	"os"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/metal3data"
	"github.com/metalwire/metalwire/pkg/generate"
	"github.com/metalwire/metalwire/pkg/render"
)

// TestPhase2RendersTheSameOSNetConfigAsPhase1 is the generator's phase 2 through the real
// controllers: the seed's example file, with a second node in each logical unit, turned into
// IPPools, Metal3DataTemplates, a KubeadmControlPlane and a KubeadmConfigTemplate by `metalwire
// generate --templates`, applied to the API server as they are, and two hosts per unit (their
// NICs carry the MACs of the unit's macMapping nodes, under kernel names that are not the
// aliases) claimed by Metal3Machines. Each host's metaData Secret must carry, base64-encoded under
// the keys the bootstrap configuration reads, and its networkData Secret as text, byte for byte
// the os-net-config config and mapping files phase 1 (`metalwire generate`) writes for that node
// with the addresses the pools gave; each host its own.
func TestPhase2RendersTheSameOSNetConfigAsPhase1(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	startManager(t, ns, managerOptions{})

	seed, err := os.ReadFile("../../../pkg/generate/testdata/seed-two-per-unit.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	f, err := generate.Parse(seed)
	g.Expect(err).NotTo(HaveOccurred())
	opts := generate.Options{Cluster: "demo", Namespace: ns, KubernetesVersion: "v1.34.1"}
	manifests, err := generate.Templates(f, opts)
	g.Expect(err).NotTo(HaveOccurred())
	var kinds []string
	for _, doc := range strings.Split(string(manifests), "---\n") {
		obj := &unstructured.Unstructured{}
		g.Expect(yaml.Unmarshal([]byte(doc), &obj.Object)).To(Succeed())
		g.Expect(env.Client.Create(ctx, obj)).To(Succeed(), "%s %s as --templates wrote it", obj.GetKind(), obj.GetName())
		kinds = append(kinds, obj.GetKind())
	}
	g.Expect(kinds).To(ContainElements("KubeadmControlPlane", "KubeadmConfigTemplate"), "the bootstrap configurations are valid objects")

	type hostRun struct {
		node     *generate.Node
		m3m      string
		metaData map[string]string
		secret   map[string][]byte
		addrs    map[string]netip.Addr
	}
	var runs []hostRun
	for _, u := range f.Units {
		g.Expect(u.Nodes).To(HaveLen(2))
		for _, node := range u.Nodes {
			var nics []string
			for alias, mac := range node.Mapping {
				nics = append(nics, "eno"+strings.TrimPrefix(alias, "em")+"="+mac)
			}
			hostName := "host-" + node.Name
			host(t, ns, hostName, nil, nil, "", nics...)
			m3m := "demo-" + node.Name + "-m3m"
			machine(t, ns, m3m, "demo-"+u.Name, machineOpts{host: hostName, cluster: "demo"})
			runs = append(runs, hostRun{node: node, m3m: m3m})
		}
	}

	state := generate.State{}
	for i, r := range runs {
		data := renderedData(t, ns, r.m3m)
		secret := getSecret(g, ns, data.Spec.NetworkData.Name)
		g.Expect(secret.Data).NotTo(HaveKey(render.OSNetConfigErrorKey))
		runs[i].secret = secret.Data
		g.Expect(data.Spec.MetaData).NotTo(BeNil(), "the template has no metaData of its own; the os-net-config files make one")
		md := getSecret(g, ns, data.Spec.MetaData.Name)
		g.Expect(yaml.Unmarshal(md.Data[infrav1.DataSecretMetaDataKey], &runs[i].metaData)).To(Succeed())
		runs[i].addrs = map[string]netip.Addr{}
		for _, net := range f.NetworkNames() {
			pool := render.NewPoolRef("", "", generate.PoolName("demo", net))
			claim := metal3data.AddressClaimName(data.Name, "host-"+r.node.Name, pool, false)
			a := addressOfClaim(t, ns, claim)
			runs[i].addrs[net] = a
			if state[net] == nil {
				state[net] = map[string]netip.Addr{}
			}
			state[net][r.node.Name] = a
		}
	}

	phase1, err := f.Generate(state, opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(phase1.Changes).To(BeEmpty(), "phase 1 keeps the addresses it is given")
	g.Expect(phase1.Nodes).To(HaveLen(len(runs)))
	seen := map[string]string{}
	for i, n := range phase1.Nodes {
		r := runs[i]
		g.Expect(n.Node.Name).To(Equal(r.node.Name))
		g.Expect(string(r.secret[render.OSNetConfigKey])).To(Equal(string(n.OSNetConfig)), "%s: os-net-config config", n.Node.Name)
		g.Expect(string(r.secret[render.OSNetConfigMappingKey])).To(Equal(string(n.Mapping)), "%s: os-net-config mapping", n.Node.Name)
		g.Expect(string(r.secret[render.OSNetConfigKey])).To(And(
			ContainSubstring("type: ovs_bridge"), ContainSubstring("ip_netmask: "+r.addrs["net0"].String()+"/24"),
			ContainSubstring("ip_netmask: "+r.addrs["net1"].String()+"/24")))

		for key, want := range map[string][]byte{render.OSNetConfigMetaDataKey: n.OSNetConfig, render.OSNetConfigMappingMetaDataKey: n.Mapping} {
			g.Expect(r.metaData).To(HaveKey(key), "%s: metaData", n.Node.Name)
			got, err := base64.StdEncoding.DecodeString(r.metaData[key])
			g.Expect(err).NotTo(HaveOccurred(), "%s: metaData %s is base64", n.Node.Name, key)
			g.Expect(string(got)).To(Equal(string(want)), "%s: metaData %s", n.Node.Name, key)
			g.Expect(seen).NotTo(HaveKey(key+"="+r.metaData[key]), "%s: another host got the same %s", n.Node.Name, key)
			seen[key+"="+r.metaData[key]] = n.Node.Name
		}
	}
}

// addressOfClaim waits for the IPAddress the IPAM controller gave an IPClaim.
func addressOfClaim(t *testing.T, ns, claim string) netip.Addr {
	t.Helper()
	var out netip.Addr
	NewWithT(t).Eventually(func(g Gomega) {
		list := &ipamv1.IPAddressList{}
		g.Expect(env.Client.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
		for _, a := range list.Items {
			if a.Spec.Claim.Name == claim {
				var err error
				out, err = netip.ParseAddr(string(a.Spec.Address))
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
		}
		g.Expect(list.Items).To(ContainElement(HaveField("Spec.Claim.Name", claim)))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	return out
}

// An os-net-config template is checked at admission (immutable, needs networkData) and, when
// it does not render for a host, the Metal3Data says so naming the field instead of writing a
// configuration the user did not ask for.
func TestOSNetConfigTemplateErrors(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	startManager(t, ns, managerOptions{})
	pool(t, ns, "prov", "192.168.0.10", "192.168.0.20", 24, "192.168.0.1")
	nd := &infrav1.NetworkData{Links: &infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{{
		Type: "phy", ID: "nic1", MACAddress: &infrav1.NetworkLinkEthernetMac{FromHostInterface: ptr.To("eno1")},
	}}}}
	onc := &infrav1.OSNetConfigTemplate{
		Template: "- type: interface\n  name: nic1\n  mtu: {{ config['prov'].mtu }}\n",
		Networks: []infrav1.OSNetConfigNetwork{{Name: "prov", IPPool: "prov"}},
	}

	alone := &infrav1.Metal3DataTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "alone"}, Spec: infrav1.Metal3DataTemplateSpec{OSNetConfig: onc}}
	g.Expect(env.Client.Create(ctx, alone)).To(MatchError(ContainSubstring("osNetConfig needs networkData")))
	unknown := onc.DeepCopy()
	unknown.Format = "ifupdown"
	badFormat := &infrav1.Metal3DataTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ifupdown"}, Spec: infrav1.Metal3DataTemplateSpec{NetworkData: nd, OSNetConfig: unknown}}
	g.Expect(env.Client.Create(ctx, badFormat)).To(MatchError(ContainSubstring(`spec.osNetConfig.format: Unsupported value: "ifupdown": supported values: "os-net-config", "netplan"`)))

	tmpl := template(t, ns, "typo", infrav1.Metal3DataTemplateSpec{NetworkData: nd, OSNetConfig: onc})
	edited := tmpl.DeepCopy()
	edited.Spec.OSNetConfig.Template = "- type: interface\n  name: nic1\n"
	g.Expect(env.Client.Update(ctx, edited)).To(MatchError(ContainSubstring("osNetConfig is immutable")))

	host(t, ns, "host-0", nil, nil, "", "eno1=52:54:00:00:00:01")
	machine(t, ns, "m3m-0", "typo", machineOpts{host: "host-0"})
	g.Eventually(func(g Gomega) {
		c := getClaim(g, ns, "m3m-0")
		g.Expect(c.Status.RenderedData).NotTo(BeNil())
		data := getData(g, ns, c.Status.RenderedData.Name)
		ready := condition(data.Status.Conditions, infrav1.DataReadyCondition)
		g.Expect(ready.Reason).To(Equal(infrav1.DataRenderFailedReason))
		g.Expect(data.Status.ErrorMessage).NotTo(BeNil())
		g.Expect(*data.Status.ErrorMessage).To(And(ContainSubstring("osNetConfig.template: rendering for host host-0"), ContainSubstring("mtu")))
		// The Secrets are named when the Metal3Data is made; none of them is written.
		g.Expect(data.Spec.NetworkData).NotTo(BeNil())
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: data.Spec.NetworkData.Name}, &corev1.Secret{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no Secret is written: %v", err)
		// Nor the metaData the bootstrap data would read os-net-config's files from: the
		// Metal3Machine keeps waiting for the data, so the host is never provisioned with it.
		mdName := infrav1.MetaDataSecretName("m3m-0", ptr.Deref(data.Spec.Index, 0))
		if data.Spec.MetaData != nil {
			mdName = data.Spec.MetaData.Name
		}
		err = env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: mdName}, &corev1.Secret{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no metaData Secret is written: %v", err)
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}
