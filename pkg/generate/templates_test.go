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
	g.Expect(docs).To(HaveLen(6), "two IPPools, a Metal3DataTemplate per unit, then a KubeadmControlPlane and a KubeadmConfigTemplate")

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
	g.Expect(tmpl["spec"]).To(HaveKeyWithValue("osNetConfig", HaveKeyWithValue("format", "os-net-config")))

	// The bootstrap configuration writes the files the data controller puts in each host's
	// metaData and runs os-net-config first, as phase 1's KubeadmConfig does.
	var kcp, kct map[string]any
	g.Expect(yaml.Unmarshal([]byte(docs[4]), &kcp)).To(Succeed())
	g.Expect(yaml.Unmarshal([]byte(docs[5]), &kct)).To(Succeed())
	g.Expect(kcp).To(HaveKeyWithValue("kind", "KubeadmControlPlane"))
	g.Expect(kcp["spec"]).To(And(HaveKeyWithValue("version", "v1.34.1"), HaveKeyWithValue("replicas", BeEquivalentTo(1))))
	g.Expect(kct).To(HaveKeyWithValue("kind", "KubeadmConfigTemplate"))
	for _, spec := range []any{kcp["spec"].(map[string]any)["kubeadmConfigSpec"], kct["spec"].(map[string]any)["template"].(map[string]any)["spec"]} {
		g.Expect(spec).To(HaveKeyWithValue("preKubeadmCommands", Equal([]any{generate.OSNetConfigCommand})))
		g.Expect(spec).To(HaveKeyWithValue("files", ConsistOf(
			And(HaveKeyWithValue("path", generate.ConfigPath), HaveKeyWithValue("content", "{{ ds.meta_data.os_net_config_config }}"), HaveKeyWithValue("encoding", "base64")),
			And(HaveKeyWithValue("path", generate.MappingPath), HaveKeyWithValue("content", "{{ ds.meta_data.os_net_config_mapping }}"), HaveKeyWithValue("encoding", "base64")))))
	}
}

func TestTemplatesNetplan(t *testing.T) {
	g := NewWithT(t)
	o := seedOptions
	o.Format = generate.FormatNetplan
	out, err := generate.Templates(readSeed(t), o)
	g.Expect(err).NotTo(HaveOccurred())
	docs := strings.Split(string(out), "---\n")
	var tmpl, kct map[string]any
	g.Expect(yaml.Unmarshal([]byte(docs[3]), &tmpl)).To(Succeed())
	g.Expect(yaml.Unmarshal([]byte(docs[5]), &kct)).To(Succeed())
	g.Expect(tmpl["spec"]).To(HaveKeyWithValue("osNetConfig", HaveKeyWithValue("format", "netplan")))
	spec := kct["spec"].(map[string]any)["template"].(map[string]any)["spec"]
	g.Expect(spec).To(HaveKeyWithValue("preKubeadmCommands", Equal([]any{"netplan apply"})))
	g.Expect(spec).To(HaveKeyWithValue("files", ConsistOf(
		And(HaveKeyWithValue("path", generate.NetplanPath), HaveKeyWithValue("content", "{{ ds.meta_data.netplan_config }}"), HaveKeyWithValue("encoding", "base64")))))
}

// A template netplan cannot say is refused by --templates --format netplan, not by every host.
func TestTemplatesNetplanRefusesWhatItCannotSay(t *testing.T) {
	f, err := generate.Parse([]byte(validNetworks + strings.Replace(validUnit, "type: interface", "type: sriov_pf", 1)))
	if err != nil {
		t.Fatal(err)
	}
	o := seedOptions
	o.Format = generate.FormatNetplan
	_, err = generate.Templates(f, o)
	NewWithT(t).Expect(err).To(MatchError(ContainSubstring(`controllers.networkConfig, as netplan: network_config[0]: type "sriov_pf" has no netplan equivalent`)))
}

// The controllers' KubeadmControlPlane cannot be written without a version.
func TestTemplatesNeedAVersionForTheControlPlane(t *testing.T) {
	o := seedOptions
	o.KubernetesVersion = ""
	_, err := generate.Templates(readSeed(t), o)
	NewWithT(t).Expect(err).To(MatchError(ContainSubstring("controllers: the controllers' KubeadmControlPlane needs a Kubernetes version (spec.version); give --kubernetes-version")))
}

func TestTemplatesRefuseFixedAddresses(t *testing.T) {
	f, err := generate.Parse([]byte(validNetworks + strings.Replace(validUnit, "{{ ip['net0'] }}", "192.168.0.99/24", 1)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = generate.Templates(f, seedOptions)
	NewWithT(t).Expect(err).To(MatchError(ContainSubstring(`controllers.networkConfig, as a Metal3DataTemplate: [0].addresses[0]: "192.168.0.99/24" is a fixed address`)))
}
