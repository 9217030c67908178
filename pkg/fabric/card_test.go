package fabric

import (
	"slices"
	"testing"
)

// What a card needs of the switches, by the kind of card: a plain port, a trunk of two networks
// with a list, a bond member, and a SmartNIC whose own switch stands between host and rack.
func TestCardWants(t *testing.T) {
	acl := &ACLWant{Name: ACLName("h1", "storage"), Cookie: ACLCookie("h1", "storage"), Rules: []ACLRule{{Direction: DirectionIngress, Protocol: "ssh", Action: ActionDeny}}}
	lag := &LAGWant{Name: LAGName("h1", "control"), LACP: true}
	card := &CardSwitch{Switch: "dpu1", HostPort: "pf0hpf", UplinkPort: "p0"}
	for _, c := range []struct {
		name string
		need CardNeed
		// want: the desired state of each switch the card touches, port by port.
		want map[string]map[string]Port
		acls map[string]string // list name -> the port it is bound to
	}{
		{"plain access card", CardNeed{Switch: "tor", Port: "e1", Mode: ModeAccess, Networks: []CardNetwork{{Name: "control", VLAN: 1001}}},
			map[string]map[string]Port{"tor": {"e1": {Name: "e1", Mode: ModeAccess, VLAN: 1001}}}, nil},
		{"trunk of two networks, one with a list, shut", CardNeed{Switch: "tor", Port: "e2", Mode: ModeTrunk, Down: true, HostMAC: "02:00:00:00:00:02",
			Networks: []CardNetwork{{Name: "control", VLAN: 1001}, {Name: "storage", VLAN: 1002, ACL: acl}}},
			map[string]map[string]Port{"tor": {"e2": {Name: "e2", Mode: ModeTrunk, Trunk: []int{1001, 1002}, Down: true}}},
			map[string]string{acl.Name: "e2"}},
		{"SmartNIC", CardNeed{Switch: "tor", Port: "e3", SmartNIC: card, Mode: ModeAccess, HostMAC: "02:00:00:00:00:03",
			Networks: []CardNetwork{{Name: "storage", VLAN: 1002, ACL: acl}}},
			map[string]map[string]Port{
				"dpu1": {"pf0hpf": {Name: "pf0hpf", Mode: ModeAccess, VLAN: 1002}, "p0": {Name: "p0", Mode: ModeTrunk, Trunk: []int{1002}}},
				"tor":  {"e3": {Name: "e3", Mode: ModeTrunk, Trunk: []int{1002}}},
			}, map[string]string{acl.Name: "pf0hpf"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Desired(c.need.Wants())
			for sw, ports := range c.want {
				for name, p := range ports {
					if have := got[sw].Ports[name]; !SamePort(have, p) {
						t.Errorf("switch %s port %s: %s, want %s", sw, name, have.Describe(), p.Describe())
					}
				}
				if len(got[sw].Ports) != len(ports) {
					t.Errorf("switch %s: %d ports, want %d", sw, len(got[sw].Ports), len(ports))
				}
			}
			if len(got) != len(c.want) {
				t.Errorf("%d switches touched, want %d", len(got), len(c.want))
			}
			for name, port := range c.acls {
				var found *ACL
				for _, st := range got {
					if a, ok := st.ACLs[name]; ok {
						found = &a
					}
				}
				if found == nil || found.Port != port || !slices.Equal(found.HostMACs, []string{c.need.HostMAC}) {
					t.Errorf("list %s: %+v, want it on %s with the card's MAC", name, found, port)
				}
			}
		})
	}
	// A bond member's port carries its networks as the bond's.
	st := Desired(CardNeed{Switch: "tor", Port: "e4", Mode: ModeAccess, LAG: lag, Networks: []CardNetwork{{Name: "control", VLAN: 1001}}}.Wants())["tor"]
	if l := st.LAGs[lag.Name]; !slices.Equal(l.Members, []string{"e4"}) || l.Port.VLAN != 1001 {
		t.Errorf("bond member: %+v", l)
	}
	if acl.HostMAC != "" {
		t.Error("Wants wrote the card's MAC into the caller's list")
	}
}
