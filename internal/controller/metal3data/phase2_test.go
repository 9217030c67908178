package metal3data_test

import (
	"context"
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
// controllers: the seed's example file turned into IPPools and Metal3DataTemplates by
// `metalwire generate --templates`, applied to the API server as they are, and one host per
// logical unit (its NICs carry the MACs of the unit's macMapping, under kernel names that are
// not the aliases) claimed by a Metal3Machine. Each host's networkData Secret must hold, byte
// for byte, the os-net-config config and mapping files phase 1 (`metalwire generate`) writes
// for that node with the addresses the pools gave.
func TestPhase2RendersTheSameOSNetConfigAsPhase1(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	startManager(t, ns, managerOptions{})

	seed, err := os.ReadFile("../../../pkg/generate/testdata/seed.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	f, err := generate.Parse(seed)
	g.Expect(err).NotTo(HaveOccurred())
	opts := generate.Options{Cluster: "demo", Namespace: ns}
	manifests, err := generate.Templates(f, opts)
	g.Expect(err).NotTo(HaveOccurred())
	for _, doc := range strings.Split(string(manifests), "---\n") {
		obj := &unstructured.Unstructured{}
		g.Expect(yaml.Unmarshal([]byte(doc), &obj.Object)).To(Succeed())
		g.Expect(env.Client.Create(ctx, obj)).To(Succeed(), "%s %s as --templates wrote it", obj.GetKind(), obj.GetName())
	}

	type hostRun struct {
		node   *generate.Node
		m3m    string
		secret map[string][]byte
		addrs  map[string]netip.Addr
	}
	var runs []hostRun
	for _, u := range f.Units {
		node := u.Nodes[0]
		var nics []string
		for alias, mac := range node.Mapping {
			nics = append(nics, "eno"+strings.TrimPrefix(alias, "em")+"="+mac)
		}
		hostName := "host-" + node.Name
		host(t, ns, hostName, nil, nil, "", nics...)
		m3m := "demo-" + u.Name + "-m3m"
		machine(t, ns, m3m, "demo-"+u.Name, machineOpts{host: hostName, cluster: "demo"})
		runs = append(runs, hostRun{node: node, m3m: m3m})
	}

	state := generate.State{}
	for i, r := range runs {
		data := renderedData(t, ns, r.m3m)
		secret := getSecret(g, ns, data.Spec.NetworkData.Name)
		g.Expect(secret.Data).NotTo(HaveKey(render.OSNetConfigErrorKey))
		runs[i].secret = secret.Data
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
	g.Expect(runs[0].addrs).NotTo(Equal(runs[1].addrs), "the pools give each host its own addresses")

	phase1, err := f.Generate(state, opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(phase1.Changes).To(BeEmpty(), "phase 1 keeps the addresses it is given")
	for i, n := range phase1.Nodes {
		r := runs[i]
		g.Expect(n.Node.Name).To(Equal(r.node.Name))
		g.Expect(string(r.secret[render.OSNetConfigKey])).To(Equal(string(n.OSNetConfig)), "%s: os-net-config config", n.Node.Name)
		g.Expect(string(r.secret[render.OSNetConfigMappingKey])).To(Equal(string(n.Mapping)), "%s: os-net-config mapping", n.Node.Name)
		g.Expect(string(r.secret[render.OSNetConfigKey])).To(And(
			ContainSubstring("type: ovs_bridge"), ContainSubstring("ip_netmask: "+r.addrs["net0"].String()+"/24"),
			ContainSubstring("ip_netmask: "+r.addrs["net1"].String()+"/24")))
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
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}
