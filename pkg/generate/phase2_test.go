package generate_test

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/pkg/generate"
	"github.com/metalwire/metalwire/pkg/render"
)

// Phase 2 renders, per host, what phase 1 rendered for the node with the same addresses: the
// Metal3DataTemplate of --templates goes through pkg/render's os-net-config output, the code the
// data controller runs for the networkData Secret's os-net-config keys.
func TestPhase2RendersTheSameOSNetConfigAsPhase1(t *testing.T) {
	g := NewWithT(t)
	f := readSeed(t)
	phase1, err := f.Generate(generate.State{}, seedOptions)
	g.Expect(err).NotTo(HaveOccurred())
	out, err := generate.Templates(f, seedOptions)
	g.Expect(err).NotTo(HaveOccurred())
	docs := strings.Split(string(out), "---\n")[len(f.Networks):]
	for i, node := range phase1.Nodes {
		tmpl, err := render.DecodeTemplate([]byte(docs[i]))
		g.Expect(err).NotTo(HaveOccurred())
		facts := &render.Facts{Namespace: seedOptions.Namespace}
		for alias, mac := range node.Node.Mapping {
			facts.NICs = append(facts.NICs, render.NIC{Name: alias, MAC: mac})
		}
		refs, err := tmpl.Pools(facts)
		g.Expect(err).NotTo(HaveOccurred())
		byName := map[string]render.PoolAddress{}
		for net, a := range node.Addresses {
			n := f.Networks[net]
			byName[generate.PoolName(seedOptions.Cluster, net)] = render.PoolAddress{Address: a.String(), Prefix: n.Netmask, Gateway: n.Gateway, DNSServers: n.DNSServers}
		}
		facts.Pools = render.PoolsByName(byName, refs)
		nd, err := tmpl.Networking(facts)
		g.Expect(err).NotTo(HaveOccurred())
		onc, err := nd.OSNetConfig(facts.NICs)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(devices(t, onc.Config)).To(Equal(devices(t, node.OSNetConfig)),
			"%s:\n--- phase 2\n%s\n--- phase 1\n%s", node.Node.Name, onc.Config, node.OSNetConfig)
	}
}

// device is what a host ends up with for one os-net-config device. A Metal3DataTemplate cannot
// say Open vSwitch, so ovs_bridge and linux_bridge are both a bridge (and bonds alike); the
// defaults phase 2 writes out (mtu 1500, use_dhcp false, the DNS servers on each device that
// has an address) are not compared.
type device struct {
	Kind      string
	Addresses []any
	Routes    []any
	Members   []string
}

func devices(t *testing.T, config []byte) map[string]device {
	t.Helper()
	var doc struct {
		NetworkConfig []map[string]any `json:"network_config"`
	}
	if err := yaml.Unmarshal(config, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]device{}
	var walk func(objs []any)
	add := func(o map[string]any) {
		kind := strings.TrimPrefix(strings.TrimPrefix(o["type"].(string), "ovs_"), "linux_")
		d := device{Kind: kind}
		d.Addresses, _ = o["addresses"].([]any)
		d.Routes, _ = o["routes"].([]any)
		members, _ := o["members"].([]any)
		for _, m := range members {
			d.Members = append(d.Members, m.(map[string]any)["name"].(string))
		}
		out[o["name"].(string)] = d
		walk(members)
	}
	walk = func(objs []any) {
		for _, o := range objs {
			add(o.(map[string]any))
		}
	}
	for _, o := range doc.NetworkConfig {
		add(o)
	}
	return out
}
