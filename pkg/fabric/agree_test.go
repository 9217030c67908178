package fabric

import (
	"strings"
	"testing"
)

func TestAgree(t *testing.T) {
	const mac1, mac2 = "aa:00:00:00:00:01", "aa:00:00:00:00:02"
	bond := func(mode string) *HostBond {
		return &HostBond{Name: "bond0", Mode: mode, Members: []string{mac1, mac2}}
	}
	access := func(mac, port string, vlan int) CardPort {
		return CardPort{MAC: mac, Switch: "tor", Port: port, Assigned: true, Mode: ModeAccess, VLAN: vlan}
	}
	trunk := func(mac, port string, native int, vlans ...int) CardPort {
		return CardPort{MAC: mac, Switch: "tor", Port: port, Assigned: true, Mode: ModeTrunk, VLAN: native, Trunk: vlans}
	}
	lag := func(p CardPort, name string, lacp bool) CardPort { p.LAG, p.LACP = name, lacp; return p }

	tests := []struct {
		name  string
		host  []HostCard
		ports []CardPort
		want  []string // each mismatch must contain its string, in order
	}{{
		// What `make demo` shipped before the check: an active-backup bond with VLAN 200 on it
		// over two ports the fabric put in two different access VLANs.
		name: "the old demo",
		host: []HostCard{
			{MAC: mac1, Name: "eno1", Untagged: true, Tagged: []int{200}, Bond: bond("active-backup")},
			{MAC: mac2, Name: "eno2", Untagged: true, Tagged: []int{200}, Bond: bond("active-backup")},
		},
		ports: []CardPort{access(mac1, "eth1", 1000), access(mac2, "eth2", 1050)},
		want: []string{
			"card eno1 (aa:00:00:00:00:01) on switch port tor eth1: the host sends VLAN 200 tagged, but the switch port is an access port in VLAN 1000 and drops tagged frames",
			"card eno1 (aa:00:00:00:00:01) on switch port tor eth1: the host bonds it with bond0's other member aa:00:00:00:00:02 (switch port tor eth2), but the switch port carries access VLAN 1000 while the other port carries access VLAN 1050",
			"eno2 (aa:00:00:00:00:02) on switch port tor eth2: the host sends VLAN 200 tagged",
			"eno2 (aa:00:00:00:00:02) on switch port tor eth2: the host bonds it",
		},
	}, {
		name: "active-backup bond over two trunks carrying its VLANs",
		host: []HostCard{
			{MAC: mac1, Name: "eno1", Tagged: []int{1000, 1001}, Bond: bond("active-backup")},
			{MAC: mac2, Name: "eno2", Tagged: []int{1000, 1001}, Bond: bond("active-backup")},
		},
		ports: []CardPort{trunk(mac1, "eth1", 0, 1000, 1001), trunk(mac2, "eth2", 0, 1000, 1001)},
	}, {
		name:  "a VLAN the trunk does not carry",
		host:  []HostCard{{MAC: mac1, Name: "eno1", Tagged: []int{1000, 1002}}},
		ports: []CardPort{trunk(mac1, "eth1", 0, 1000, 1001)},
		want:  []string{"the host sends VLAN 1002 tagged, but the switch port is a trunk of VLANs 1000, 1001, without VLAN 1002"},
	}, {
		name:  "untagged on a trunk without native VLAN",
		host:  []HostCard{{MAC: mac1, Name: "eno1", Untagged: true}},
		ports: []CardPort{trunk(mac1, "eth1", 0, 1000)},
		want:  []string{"sends untagged frames (an address on eno1), but the switch port is a trunk of VLAN 1000 with no native VLAN"},
	}, {
		name:  "untagged on a trunk's native VLAN, tagged on its VLAN; MAC spelt otherwise",
		host:  []HostCard{{MAC: "AA-00-00-00-00-01", Name: "eno1", Untagged: true, Tagged: []int{1001}}},
		ports: []CardPort{trunk(mac1, "eth1", 1000, 1001)},
	}, {
		name:  "idle port: not compared",
		host:  []HostCard{{MAC: mac1, Name: "eno1", Tagged: []int{5}}},
		ports: []CardPort{{MAC: mac1, Switch: "tor", Port: "eth1"}},
	}, {
		name: "LACP bond on a LACP LAG",
		host: []HostCard{
			{MAC: mac1, Name: "eno1", Untagged: true, Bond: bond("802.3ad")},
			{MAC: mac2, Name: "eno2", Untagged: true, Bond: bond("802.3ad")},
		},
		ports: []CardPort{lag(access(mac1, "eth1", 1000), "lag-h1", true), lag(access(mac2, "eth2", 1000), "lag-h1", true)},
	}, {
		name: "LACP bond over ports in no LAG",
		host: []HostCard{
			{MAC: mac1, Name: "eno1", Untagged: true, Bond: bond("802.3ad")},
			{MAC: mac2, Name: "eno2", Untagged: true, Bond: bond("802.3ad")},
		},
		ports: []CardPort{access(mac1, "eth1", 1000), access(mac2, "eth2", 1000)},
		want:  []string{"eno1 (aa:00:00:00:00:01) on switch port tor eth1: the host bonds it in bond0 with LACP (802.3ad), but the switch port is not in a LAG, so LACP never negotiates", "eno2"},
	}, {
		name:  "cards the switch bonds, the host does not",
		host:  []HostCard{{MAC: mac1, Name: "eno1", Untagged: true}, {MAC: mac2, Name: "eno2"}},
		ports: []CardPort{lag(access(mac1, "eth1", 1000), "lag-h1", true), lag(access(mac2, "eth2", 1000), "lag-h1", true)},
		want:  []string{"eno1 (aa:00:00:00:00:01) on switch port tor eth1: the host does not bond the card, but the switch port is a member of LAG lag-h1", "eno2"},
	}, {
		name: "active-backup host bond on an LACP LAG",
		host: []HostCard{
			{MAC: mac1, Name: "eno1", Untagged: true, Bond: bond("active-backup")},
			{MAC: mac2, Name: "eno2", Untagged: true, Bond: bond("active-backup")},
		},
		ports: []CardPort{lag(access(mac1, "eth1", 1000), "lag-h1", true), lag(access(mac2, "eth2", 1000), "lag-h1", true)},
		want:  []string{"without LACP, but the switch port is in LACP LAG lag-h1, which waits for LACP", "eno2"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Agree(tt.host, tt.ports)
			if len(got) != len(tt.want) {
				t.Fatalf("%d mismatches, want %d: %q", len(got), len(tt.want), got)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i].String(), w) {
					t.Errorf("mismatch %d:\n  %s\nwant it to contain\n  %s", i, got[i], w)
				}
			}
		})
	}
}
