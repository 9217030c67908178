package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/metalwire/metalwire/pkg/render/osnetconfig"
)

var updateGolden = flag.Bool("update", false, "rewrite the command's golden files from its current output (review the diff!)")

// The golden cases of pkg/render double as the command's inputs.
const goldenDir = "../../pkg/render/testdata/golden"

func golden(t *testing.T, parts ...string) string {
	t.Helper()
	return filepath.Join(append([]string{goldenDir}, parts...)...)
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRenderNetworkDataMatchesTheLibrary(t *testing.T) {
	g := NewWithT(t)
	out, code := run(context.Background(), "render", "--template", golden(t, "seed", "template.yaml"), "--host", golden(t, "seed", "host.yaml"), "--index", "3")
	g.Expect(code).To(Equal(0), out)
	want, err := os.ReadFile(golden(t, "seed", "network_data.json"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal(string(want)))
}

func TestRenderEveryFormat(t *testing.T) {
	base := []string{"render", "--template", golden(t, "seed", "template.yaml"), "--host", golden(t, "seed", "host.yaml"), "--index", "3",
		"--machine", "machine-1", "--metal3machine", "machine-1"}
	tests := []struct {
		format string
		want   []string
	}{
		{"metadata", []string{"providerid: default/node-1/machine-1\n", "ip: 192.168.0.13\n", "name_machine: machine-1\n", "label-1: \"\"\n"}},
		{"netplan", []string{"network:\n", "version: 2", "vlan1:", "- 192.168.0.13/24"}},
		{"nmstate", []string{"interfaces:\n", "type: bond", "base-iface: bond0", "next-hop-address: 192.168.0.1"}},
		{"network-data", []string{`"network_id": "Baremetal"`}},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			g := NewWithT(t)
			out, code := run(context.Background(), append(base, "--format", tt.format)...)
			g.Expect(code).To(Equal(0), out)
			for _, w := range tt.want {
				g.Expect(out).To(ContainSubstring(w))
			}
		})
	}
}

func TestRenderTakesPoolAddressesFromPoolsFile(t *testing.T) {
	g := NewWithT(t)
	pools := writeFile(t, "pools.yaml", "provisioning:\n  address: 172.22.0.77\n  prefix: 24\n  gateway: 172.22.0.1\n  dnsServers: [172.22.0.53]\n")
	out, code := run(context.Background(), "render", "--template", golden(t, "preprovisioning", "template.yaml"),
		"--host", golden(t, "preprovisioning", "host.yaml"), "--pools", pools)
	g.Expect(code).To(Equal(0), out)
	g.Expect(out).To(ContainSubstring(`"ip_address": "172.22.0.77"`))
	g.Expect(out).To(ContainSubstring(`"address": "172.22.0.53"`))
}

func TestRenderErrors(t *testing.T) {
	seedTemplate, seedHost := golden(t, "seed", "template.yaml"), golden(t, "seed", "host.yaml")
	seed, err := os.ReadFile(seedTemplate)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing flags are a usage error", []string{"render", "--host", seedHost}, 2, "--template and --host are required"},
		{"unknown format", []string{"render", "--template", seedTemplate, "--host", seedHost, "--format", "ifupdown"}, 2,
			`--format "ifupdown" is not a format; use one of network-data, metadata, netplan, nmstate, os-net-config, os-net-config-mapping`},
		{"a pool address not given names the pool and the flag",
			[]string{"render", "--template", golden(t, "preprovisioning", "template.yaml"), "--host", golden(t, "preprovisioning", "host.yaml")}, 1,
			"metalwire: preprovisioningNetworkData.networks.ipv4[0].ipAddressFromIPPool: waiting for an address from pool provisioning; give its address in --pools"},
		{"a pre-provisioning template has no metaData",
			[]string{"render", "--template", golden(t, "preprovisioning", "template.yaml"), "--host", golden(t, "preprovisioning", "host.yaml"), "--format", "metadata"}, 1,
			"a Metal3PreprovisioningDataTemplate has no metaData; render it with --format network-data, netplan, nmstate or os-net-config"},
		{"metaData without a Metal3Machine names the flag",
			[]string{"render", "--template", seedTemplate, "--host", seedHost, "--format", "metadata", "--machine", "m"}, 1,
			"or pass --metal3machine NAME"},
		{"address past the end of the seed-era range",
			[]string{"render", "--template", seedTemplate, "--host", seedHost, "--index", "91"}, 1,
			"networkData.networks.ipv4[0].ipAddress.end: index 91 gives 192.168.0.101, past end 192.168.0.100"},
		{"a NIC not on the host",
			[]string{"render", "--template", writeFile(t, "t.yaml", strings.Replace(string(seed), `fromHostInterface: "eth1"`, `fromHostInterface: "eth9"`, 1)), "--host", seedHost}, 1,
			`networkData.links.ethernets[1].macAddress.fromHostInterface: host node-1 has no NIC "eth9"; its NICs are eth0, eth1`},
		{"a typo in a field name is refused, not ignored",
			[]string{"render", "--template", writeFile(t, "t.yaml", strings.Replace(string(seed), "vlanID: 1", "vlanId: 1", 1)), "--host", seedHost}, 1,
			`unknown field "spec.networkData.links.vlans[0].vlanId"`},
		{"a seed-era manifest points at metalwire migrate",
			[]string{"render", "--template", writeFile(t, "t.yaml", strings.Replace(string(seed), "infrastructure.cluster.x-k8s.io/v1beta2", "infrastructure.cluster.x-k8s.io/v1alpha4", 1)), "--host", seedHost}, 1,
			"metalwire render reads infrastructure.cluster.x-k8s.io/v1beta2 (convert older manifests with metalwire migrate)"},
		{"a missing file", []string{"render", "--template", "/nonexistent.yaml", "--host", seedHost}, 1, "/nonexistent.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			out, code := run(context.Background(), tt.args...)
			g.Expect(code).To(Equal(tt.code), out)
			g.Expect(out).To(ContainSubstring(tt.want))
			g.Expect(strings.Count(strings.TrimSpace(out), "\n")).To(BeZero(), "one line: %s", out)
		})
	}
}

// TestRenderOSNetConfig renders os-net-config from the command line: the config equals the
// library's golden file, the mapping names the NICs by MAC, and both pass os-net-config's own
// checks. The repository's example template renders to its golden file too.
func TestRenderOSNetConfig(t *testing.T) {
	seed := []string{"render", "--template", golden(t, "seed", "template.yaml"), "--host", golden(t, "seed", "host.yaml"), "--index", "3"}
	example := []string{"render", "--template", "../../examples/cluster/03-datatemplate.yaml",
		"--host", "testdata/examples-cluster/host.yaml", "--pools", "testdata/examples-cluster/pools.yaml", "--vlans", "testdata/examples-cluster/vlans.yaml", "--nic", "testdata/examples-cluster/nic.yaml"}
	tests := []struct {
		name       string
		args       []string
		config     string // golden file of --format os-net-config
		mapping    string // golden file of --format os-net-config-mapping
		wantConfig []string
	}{
		{name: "the seed template", args: seed,
			config: golden(t, "seed", "os-net-config.yaml"), mapping: golden(t, "seed", "os-net-config-mapping.yaml"),
			wantConfig: []string{"type: linux_bond", "bonding_options: mode=802.3ad", "vlan_id: 1", "ip_netmask: 192.168.0.13/24", "next_hop: 192.168.0.1"}},
		{name: "examples/cluster/03-datatemplate.yaml", args: example,
			config: "testdata/examples-cluster/os-net-config.yaml", mapping: "testdata/examples-cluster/os-net-config-mapping.yaml",
			wantConfig: []string{"bonding_options: mode=802.3ad lacp_rate=slow miimon=100", "device: bond0", "vlan_id: 1000", "vlan_id: 1050", "ip_netmask: fd00:200::20/64", "ip_netmask: 192.168.111.20/24", "default: true"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			config, code := run(context.Background(), append(tt.args, "--format", "os-net-config")...)
			g.Expect(code).To(Equal(0), config)
			mapping, code := run(context.Background(), append(tt.args, "--format", "os-net-config-mapping")...)
			g.Expect(code).To(Equal(0), mapping)
			if *updateGolden {
				g.Expect(os.WriteFile(tt.config, []byte(config), 0o600)).To(Succeed())
				g.Expect(os.WriteFile(tt.mapping, []byte(mapping), 0o600)).To(Succeed())
			}
			for path, got := range map[string]string{tt.config: config, tt.mapping: mapping} {
				want, err := os.ReadFile(path)
				g.Expect(err).NotTo(HaveOccurred(), "run go test ./cmd/metalwire -run TestRenderOSNetConfig -update and review the file")
				g.Expect(got).To(Equal(string(want)), "%s differs", path)
			}
			for _, w := range tt.wantConfig {
				g.Expect(config).To(ContainSubstring(w))
			}
			g.Expect(osnetconfig.Validate([]byte(config))).To(Succeed())
			g.Expect(osnetconfig.ValidateMapping([]byte(mapping))).To(Succeed())
		})
	}
}

func TestRenderOSNetConfigRefusesWhatItCannotExpress(t *testing.T) {
	g := NewWithT(t)
	out, code := run(context.Background(), "render", "--template", golden(t, "bridge", "template.yaml"), "--host", golden(t, "bridge", "host.yaml"),
		"--format", "os-net-config", "--pools", writeFile(t, "pools.yaml", "external: {address: 192.168.50.11, prefix: 24, gateway: 192.168.50.1}"))
	g.Expect(code).To(Equal(1), out)
	g.Expect(out).To(ContainSubstring(`link "br-ex": bridge settings (bridge_forward_delay, bridge_stp) have no os-net-config linux_bridge equivalent`))
}

// TestRenderTakesVLANIDsFromVLANsFile: a VLAN link with vlanIDFrom is tagged with the id --vlans
// gives; without it the error names the link, the network and the flag.
func TestRenderTakesVLANIDsFromVLANsFile(t *testing.T) {
	g := NewWithT(t)
	seed, err := os.ReadFile(golden(t, "seed", "template.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	tmpl := writeFile(t, "t.yaml", strings.Replace(string(seed), "vlanID: 1", "vlanIDFrom: {clusterNetwork: prod, network: storage}", 1))
	args := []string{"render", "--template", tmpl, "--host", golden(t, "seed", "host.yaml"), "--index", "3"}

	out, code := run(context.Background(), args...)
	g.Expect(code).To(Equal(1), out)
	g.Expect(out).To(ContainSubstring("networkData.links.vlans[0].vlanIDFrom: no VLAN id is known for network storage of ClusterNetwork prod; give its VLAN id in --vlans (a YAML map: prod/storage: 1001)"))

	out, code = run(context.Background(), append(args, "--vlans", writeFile(t, "vlans.yaml", "prod/storage: 1001\n"))...)
	g.Expect(code).To(Equal(0), out)
	g.Expect(out).To(ContainSubstring(`"vlan_id": 1001`))

	out, code = run(context.Background(), append(args, "--vlans", writeFile(t, "vlans.yaml", "storage: 1001\n"))...)
	g.Expect(code).To(Equal(1), out)
	g.Expect(out).To(ContainSubstring(`key "storage" is not clusterNetwork/network; write e.g. prod/storage: 1001`))
}

// TestRenderTakesBondFromNIC: a bond with bondFrom bonds the cards the host's NIC object says
// the fabric bonded, by MAC, 802.3ad; without --nic the error names the bond and the flag.
func TestRenderTakesBondFromNIC(t *testing.T) {
	g := NewWithT(t)
	tmpl := writeFile(t, "t.yaml", `apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3DataTemplate
metadata: {name: bonded, namespace: default}
spec:
  networkData:
    links:
      bonds:
      - {id: bond0, bondFrom: {clusterNetwork: prod, network: control}}
    networks:
      ipv4DHCP: [{id: control-dhcp, link: bond0}]
`)
	args := []string{"render", "--template", tmpl, "--host", golden(t, "seed", "host.yaml")}
	out, code := run(context.Background(), args...)
	g.Expect(code).To(Equal(1), out)
	g.Expect(out).To(ContainSubstring("networkData.links.bonds[0].bondFrom: ClusterNetwork prod has not bonded this host's cards for network control; the bond is rendered once the host is given the network; give the host's NIC object, once the ClusterNetwork bonded its cards, in --nic (kubectl get nic NAME -o yaml)"))

	nic := writeFile(t, "nic.yaml", `apiVersion: network.metalwire.io/v1alpha1
kind: NIC
metadata: {name: nic-node-1, namespace: default}
spec:
  node: node-1
  networkDeviceRef: nd1
  nics:
  - {mac: "52:54:00:aa:00:01", networkDevice: {switch: {name: leaf1, port: eth1}}}
  - {mac: "52:54:00:aa:00:02", networkDevice: {switch: {name: leaf1, port: eth2}}}
status:
  clusterNetwork: prod
  nics:
  - {network: control, vlanID: 1001, lag: {name: lag0000000001, mode: lacp, lacpRate: slow}}
  - {network: control, vlanID: 1001, lag: {name: lag0000000001, mode: lacp, lacpRate: slow}}
`)
	out, code = run(context.Background(), append(args, "--nic", nic, "--format", "netplan")...)
	g.Expect(code).To(Equal(0), out)
	g.Expect(out).To(And(ContainSubstring("mode: 802.3ad"), ContainSubstring("lacp-rate: slow"), ContainSubstring("52:54:00:aa:00:01"), ContainSubstring("52:54:00:aa:00:02")))
}
