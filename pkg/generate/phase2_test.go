package generate_test

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/metalwire/metalwire/pkg/generate"
	"github.com/metalwire/metalwire/pkg/render"
)

// Phase 2 renders, per host, exactly what phase 1 rendered for the node with the same addresses:
// the Metal3DataTemplate of --templates goes through `metalwire render`'s code (the data
// controller's: render.OSNetConfigFromTemplate), for a host whose NICs carry the node's MACs. The
// envtest version, through the controllers, is in internal/controller/metal3data.
func TestPhase2RendersTheSameOSNetConfigAsPhase1(t *testing.T) {
	g := NewWithT(t)
	f := readSeed(t)
	phase1, err := f.Generate(generate.State{}, seedOptions)
	g.Expect(err).NotTo(HaveOccurred())
	out, err := generate.Templates(f, seedOptions)
	g.Expect(err).NotTo(HaveOccurred())
	docs := strings.Split(string(out), "---\n")[len(f.Networks):]
	g.Expect(docs).To(HaveLen(2*len(phase1.Nodes)), "one template and one bootstrap configuration per unit, one node per unit in the seed")
	for i, node := range phase1.Nodes {
		tmpl, err := render.DecodeTemplate([]byte(docs[i]))
		g.Expect(err).NotTo(HaveOccurred())
		facts := &render.Facts{Namespace: seedOptions.Namespace, Host: render.Object{Name: "host-" + node.Node.Name}}
		for alias, mac := range node.Node.Mapping {
			// The host's kernel names are not the aliases: the mapping file is what links them.
			facts.NICs = append(facts.NICs, render.NIC{Name: "eno" + strings.TrimPrefix(alias, "em"), MAC: mac})
		}
		refs, err := tmpl.Pools(facts)
		g.Expect(err).NotTo(HaveOccurred())
		byName := map[string]render.PoolAddress{}
		for net, a := range node.Addresses {
			n := f.Networks[net]
			byName[generate.PoolName(seedOptions.Cluster, net)] = render.PoolAddress{Address: a.String(), Prefix: n.Netmask, Gateway: n.Gateway, DNSServers: n.DNSServers}
		}
		facts.Pools = render.PoolsByName(byName, refs)
		netFacts, err := render.WithOSNetConfigAliases(tmpl.OSNetConfig, facts)
		g.Expect(err).NotTo(HaveOccurred())
		nd, err := tmpl.Networking(netFacts)
		g.Expect(err).NotTo(HaveOccurred())
		onc, err := tmpl.RenderOSNetConfig(nd, facts)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(string(onc.Config)).To(Equal(string(node.OSNetConfig)), "%s: os-net-config config", node.Node.Name)
		g.Expect(string(onc.Mapping)).To(Equal(string(node.Mapping)), "%s: os-net-config mapping", node.Node.Name)
		g.Expect(string(onc.Config)).To(ContainSubstring("type: ovs_bridge"), "Open vSwitch stays Open vSwitch")
	}
}

// A host that matches no node of the unit's macMapping is refused, naming the fix.
func TestPhase2HostWithUnknownMACs(t *testing.T) {
	g := NewWithT(t)
	f := readSeed(t)
	out, err := generate.Templates(f, seedOptions)
	g.Expect(err).NotTo(HaveOccurred())
	tmpl, err := render.DecodeTemplate([]byte(strings.Split(string(out), "---\n")[len(f.Networks)]))
	g.Expect(err).NotTo(HaveOccurred())
	facts := &render.Facts{Host: render.Object{Name: "stranger"}, NICs: []render.NIC{{Name: "eno1", MAC: "52:54:00:00:00:01"}}}
	_, err = render.OSNetConfigFromTemplate(tmpl.OSNetConfig, facts)
	g.Expect(err).To(MatchError(ContainSubstring("osNetConfig.macMappings: host stranger (NICs eno1=52:54:00:00:00:01) has the MACs of none of node-0")))
}
