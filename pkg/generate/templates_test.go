package generate_test

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/pkg/generate"
)

func TestTemplatesOfTheSeed(t *testing.T) {
	g := NewWithT(t)
	out, err := generate.Templates(readSeed(t), seedOptions)
	g.Expect(err).NotTo(HaveOccurred())
	golden(t, "templates.yaml", out)
	docs := strings.Split(string(out), "---\n")
	g.Expect(docs).To(HaveLen(4), "two IPPools, a Metal3DataTemplate per unit")

	var net1 map[string]any
	g.Expect(yaml.Unmarshal([]byte(docs[1]), &net1)).To(Succeed())
	g.Expect(net1["spec"]).To(HaveKeyWithValue("prefix", BeEquivalentTo(24)))
	g.Expect(net1["spec"]).To(HaveKeyWithValue("pools", HaveLen(4)), "the addresses list, one single-address pool each")

	var tmpl map[string]any
	g.Expect(yaml.Unmarshal([]byte(docs[2]), &tmpl)).To(Succeed())
	g.Expect(tmpl["metadata"]).To(HaveKeyWithValue("name", "demo-controllers"))
	nd := tmpl["spec"].(map[string]any)["networkData"].(map[string]any)
	g.Expect(nd["networks"]).To(HaveKeyWithValue("ipv4", ConsistOf(
		And(HaveKeyWithValue("link", "br-ctlplane"), HaveKeyWithValue("ipAddressFromIPPool", "demo-net0"), HaveKey("routes")),
		And(HaveKeyWithValue("link", "em0"), HaveKeyWithValue("ipAddressFromIPPool", "demo-net1")))))
	g.Expect(nd["links"]).To(HaveKeyWithValue("bonds", ConsistOf(HaveKeyWithValue("bondLinks", ConsistOf("em1", "em2")))))
	g.Expect(nd["services"]).To(HaveKeyWithValue("dns", ConsistOf("8.8.8.8", "8.8.4.4")))
}

func TestTemplatesRefuseFixedAddresses(t *testing.T) {
	f, err := generate.Parse([]byte(validNetworks + strings.Replace(validUnit, "{{ ip['net0'] }}", "192.168.0.99/24", 1)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = generate.Templates(f, seedOptions)
	NewWithT(t).Expect(err).To(MatchError(ContainSubstring(`controllers.networkConfig, as a Metal3DataTemplate: [0].addresses[0]: "192.168.0.99/24" is a fixed address`)))
}
