package osnetconfig_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/internal/schematest"
	"github.com/metalwire/metalwire/pkg/render/osnetconfig"
)

// netplanGenerate runs Debian's `netplan generate` on the file and returns what it wrote under
// run/ (systemd-networkd units and OVS services), by file name; a file netplan refuses fails the
// test.
func netplanGenerate(t *testing.T, plan []byte) map[string]string {
	t.Helper()
	files, err := schematest.NetplanFiles(t, plan)
	if err != nil {
		t.Fatalf("netplan generate refused the file: %v\n--- file\n%s", err, plan)
	}
	return files
}

func TestNetplanOfLinuxBondAndVLANs(t *testing.T) {
	g := NewWithT(t)
	var list []any
	g.Expect(yaml.Unmarshal([]byte(`
- type: linux_bond
  name: bond0
  bonding_options: "mode=802.3ad miimon=100 lacp_rate=fast"
  mtu: 9000
  members:
  - {type: interface, name: nic1}
  - {type: interface, name: nic2}
- type: vlan
  vlan_id: 100
  device: bond0
  addresses: [{ip_netmask: 10.0.100.5/24}]
  routes: [{ip_netmask: 10.1.0.0/16, next_hop: 10.0.100.1, route_options: "metric 50"}]
- type: interface
  name: nic3
  use_dhcp: true
  domain: [example.com]
`), &list)).To(Succeed())
	plan, err := osnetconfig.Netplan(list, map[string]string{"nic1": "52:54:00:00:00:01", "nic2": "52:54:00:00:00:02"})
	g.Expect(err).NotTo(HaveOccurred())
	files := netplanGenerate(t, plan)
	g.Expect(files).To(HaveKeyWithValue("10-netplan-bond0.netdev", And(ContainSubstring("Kind=bond"), ContainSubstring("Mode=802.3ad"),
		ContainSubstring("MIIMonitorSec=100ms"), ContainSubstring("LACPTransmitRate=fast"), ContainSubstring("MTUBytes=9000"))))
	g.Expect(files).To(HaveKeyWithValue("10-netplan-nic1.network", ContainSubstring("Bond=bond0")))
	g.Expect(files).To(HaveKeyWithValue("10-netplan-nic2.network", ContainSubstring("Bond=bond0")))
	g.Expect(files).To(HaveKeyWithValue("10-netplan-bond0.network", ContainSubstring("VLAN=vlan100")))
	g.Expect(files).To(HaveKeyWithValue("10-netplan-vlan100.netdev", And(ContainSubstring("Kind=vlan"), ContainSubstring("Id=100"))))
	g.Expect(files).To(HaveKeyWithValue("10-netplan-vlan100.network", And(ContainSubstring("Address=10.0.100.5/24"),
		ContainSubstring("Destination=10.1.0.0/16"), ContainSubstring("Gateway=10.0.100.1"), ContainSubstring("Metric=50"))))
	g.Expect(files).To(HaveKeyWithValue("10-netplan-nic3.network", And(ContainSubstring("DHCP=ipv4"), ContainSubstring("Domains=example.com"))))
}

func TestNetplanRefusesWhatItCannotSay(t *testing.T) {
	tests := []struct{ given, wantErr string }{
		{"- {type: sriov_pf, name: p1, numvfs: 4}", `network_config[0]: type "sriov_pf" has no netplan equivalent`},
		{"- {type: interface, name: em0, ethtool_opts: x}", "network_config[0].ethtool_opts has no netplan equivalent"},
		{"- {type: linux_bond, name: b, bonding_options: 'fail_over_mac=1', members: [{type: interface, name: a}]}", `bonding_options: "fail_over_mac=1" has no netplan equivalent`},
		{"- {type: vlan, vlan_id: 5}", "a vlan needs a device"},
	}
	for _, tt := range tests {
		t.Run(tt.wantErr, func(t *testing.T) {
			var list []any
			if err := yaml.Unmarshal([]byte(tt.given), &list); err != nil {
				t.Fatal(err)
			}
			_, err := osnetconfig.Netplan(list, nil)
			NewWithT(t).Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
		})
	}
}
