package main

import (
	"context"
	"os"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// `metalwire render --format os-net-config` of a Metal3DataTemplate that `metalwire generate
// --templates` wrote gives, for a host with a node's MACs and the node's addresses, the files
// phase 1 writes for that node (pkg/generate's golden files).
func TestRenderOSNetConfigOfGeneratedTemplate(t *testing.T) {
	g := NewWithT(t)
	out, code := run(context.Background(), "generate", "--templates", "-f", seedFile, "--cluster", "demo", "-n", "metal3", "--kubernetes-version", "v1.34.1")
	g.Expect(code).To(Equal(0), out)
	docs := strings.Split(out, "---\n")
	g.Expect(docs).To(HaveLen(6))
	template := writeFile(t, "controllers.yaml", docs[2]) // after the two IPPools
	host := writeFile(t, "host.yaml", `apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata: {name: rack1-host-3, namespace: metal3}
spec: {online: true}
status:
  hardware:
    nics:
    - {name: eno1, mac: "00:c8:7c:e6:f0:2e"}
    - {name: eno2, mac: "00:c8:7c:e6:f0:2f"}
    - {name: eno3, mac: "00:c8:7c:e6:f0:30"}
`)
	pools := writeFile(t, "pools.yaml", `demo-net0: {address: 192.168.0.10, prefix: 24, gateway: 192.168.0.1, dnsServers: [8.8.8.8, 8.8.4.4]}
demo-net1: {address: 192.168.1.10, prefix: 24}
`)
	args := []string{"render", "--template", template, "--host", host, "--pools", pools}
	for format, golden := range map[string]string{
		"os-net-config":         "../../pkg/generate/testdata/golden/controllers-node-0/config.yaml",
		"os-net-config-mapping": "../../pkg/generate/testdata/golden/controllers-node-0/mapping.yaml",
	} {
		got, code := run(context.Background(), append(args, "--format", format)...)
		g.Expect(code).To(Equal(0), got)
		want, err := os.ReadFile(golden)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(string(want)), "--format %s", format)
	}
	// network_data.json finds em1 (the alias) on eno2, the NIC of its MAC.
	nd, code := run(context.Background(), args...)
	g.Expect(code).To(Equal(0), nd)
	g.Expect(nd).To(ContainSubstring(`"ethernet_mac_address": "00:c8:7c:e6:f0:2f"`))
}

// The example of docs/data-templating.md's osNetConfig section renders as that page says: a host
// matching no macMappings entry is mapped through interfaces.
func TestDataTemplatingDocsOSNetConfigExample(t *testing.T) {
	g := NewWithT(t)
	doc, err := os.ReadFile("../../docs/data-templating.md")
	g.Expect(err).NotTo(HaveOccurred())
	_, section, ok := strings.Cut(string(doc), "## An os-net-config template")
	g.Expect(ok).To(BeTrue(), "docs/data-templating.md lost its osNetConfig section")
	_, block, _ := strings.Cut(section, "```yaml\n")
	block, _, _ = strings.Cut(block, "```")
	template := writeFile(t, "template.yaml", block)
	host := writeFile(t, "host.yaml", `apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata: {name: node-3, namespace: metal3}
spec: {online: true}
status: {hardware: {nics: [{name: eno1, mac: "00:c8:7c:e6:f0:99"}]}}
`)
	pools := writeFile(t, "pools.yaml", "demo-prov: {address: 192.168.0.10, prefix: 24, gateway: 192.168.0.1, dnsServers: [8.8.8.8]}\n")
	args := []string{"render", "--template", template, "--host", host, "--pools", pools, "--format"}
	config, code := run(context.Background(), append(args, "os-net-config")...)
	g.Expect(code).To(Equal(0), config)
	g.Expect(config).To(And(ContainSubstring("ip_netmask: 192.168.0.10/24"), ContainSubstring("next_hop: 192.168.0.1"), ContainSubstring("name: nic1")))
	mapping, code := run(context.Background(), append(args, "os-net-config-mapping")...)
	g.Expect(code).To(Equal(0), mapping)
	g.Expect(mapping).To(Equal("interface_mapping:\n  nic1: 00:c8:7c:e6:f0:99\n"))
}
