package fabric

import (
	"slices"
	"strings"
	"testing"
)

func opsOf(b Batch) []string {
	out := make([]string, 0, len(b))
	for _, c := range b {
		out = append(out, c.String())
	}
	return out
}

// A host's network with an access list and portStatus down: the port is shut, the list bound
// to it (a trunk's list to its VLAN, a bond's to its members), and both undone when it leaves.
func TestDesiredAndDiffOfACLsAndPortState(t *testing.T) {
	rules := []ACLRule{{Direction: DirectionIngress, Protocol: "ssh", Action: ActionDeny}, {Direction: DirectionIngress, Protocol: "all", Action: ActionAllow}}
	acl := func(host, network, mac string) *ACLWant {
		return &ACLWant{Name: ACLName(host, network), Cookie: ACLCookie(host, network), HostMAC: mac, Rules: rules}
	}
	lag := &LAGWant{Name: LAGName("h2", "storage"), LACP: true}
	wants := []PortWant{
		{Switch: "s1", Port: "p1", Mode: ModeAccess, VLAN: 1001, Down: true, ACL: acl("h1", "control", "02:00:00:00:00:01")},
		{Switch: "s1", Port: "p2", Mode: ModeTrunk, VLAN: 1002, ACL: acl("h1", "storage", "02:00:00:00:00:02")},
		{Switch: "s1", Port: "p2", Mode: ModeTrunk, VLAN: 1003},
		{Switch: "s1", Port: "p3", Mode: ModeAccess, VLAN: 1002, LAG: lag, ACL: acl("h2", "storage", "02:00:00:00:00:03")},
		{Switch: "s1", Port: "p4", Mode: ModeAccess, VLAN: 1002, LAG: lag, ACL: acl("h2", "storage", "02:00:00:00:00:04")},
	}
	want := Desired(wants)["s1"]
	if !want.Ports["p1"].Down || want.Ports["p2"].Down {
		t.Errorf("down: p1 %v p2 %v; want p1 only", want.Ports["p1"].Down, want.Ports["p2"].Down)
	}
	trunk := want.ACLs[ACLName("h1", "storage")]
	if trunk.Port != "p2" || trunk.VLAN != 1002 || !slices.Equal(trunk.HostMACs, []string{"02:00:00:00:00:02"}) {
		t.Errorf("trunk list %+v: want port p2, vlan 1002, the card's MAC", trunk)
	}
	if a := want.ACLs[ACLName("h1", "control")]; a.Port != "p1" || a.VLAN != 0 {
		t.Errorf("access list %+v: want port p1 with no VLAN match", a)
	}
	bond := want.ACLs[ACLName("h2", "storage")]
	if bond.Port != lag.Name || !slices.Equal(bond.Members, []string{"p3", "p4"}) || len(bond.HostMACs) != 2 {
		t.Errorf("bond list %+v: want the bond, both members, both MACs", bond)
	}

	// From nothing: VLANs, ports, the bond, then the lists.
	b := Diff(want, State{Ports: map[string]Port{"p1": {Name: "p1", Mode: ModeAccess, VLAN: 1}}}, Record{}, 1)
	got := strings.Join(opsOf(b), "\n")
	for _, line := range []string{"access-port p1 vlan 1001", "ensure-acl " + ACLName("h1", "control") + " on p1 2 rule(s) then allow", "ensure-acl " + ACLName("h1", "storage") + " on p2 vlan 1002"} {
		if !strings.Contains(got, line) {
			t.Errorf("batch lacks %q:\n%s", line, got)
		}
	}
	if i, j := slices.IndexFunc(b, func(c Change) bool { return c.Op == OpEnsureLAG }), slices.IndexFunc(b, func(c Change) bool { return c.Op == OpEnsureACL }); i < 0 || j < i {
		t.Errorf("lists must follow the bond they are bound to:\n%s", got)
	}

	// Applied: nothing more. The flows a switch reads back stand for the list.
	have := want
	have.ACLs = map[string]ACL{}
	for n, a := range want.ACLs {
		flows, err := a.FlowsOf()
		if err != nil {
			t.Fatal(err)
		}
		have.ACLs[n] = ACL{Name: n, Cookie: a.Cookie, Port: a.Port, Flows: flows}
	}
	rec := RecordOf(want)
	if b := Diff(want, have, rec, 1); len(b) != 0 {
		t.Errorf("second pass sends %v, want nothing", opsOf(b))
	}
	// A changed rule is one ensure of that list; a port brought up is one port change.
	changed := Desired(append([]PortWant{{Switch: "s1", Port: "p1", Mode: ModeAccess, VLAN: 1001, ACL: &ACLWant{
		Name: ACLName("h1", "control"), Cookie: ACLCookie("h1", "control"), HostMAC: "02:00:00:00:00:01", Rules: rules[1:], DefaultDeny: true}}}, wants[1:]...))["s1"]
	if got := opsOf(Diff(changed, have, rec, 1)); len(got) != 2 || !strings.HasPrefix(got[0], "access-port p1 vlan 1001") || !strings.HasPrefix(got[1], "ensure-acl "+ACLName("h1", "control")) {
		t.Errorf("changed list and port state: %v", got)
	}
	// Every host gone: the lists are removed first, then the ports reset up.
	b = Diff(State{Ports: map[string]Port{}}, have, rec, 1)
	if len(b) < 3 || b[0].Op != OpRemoveACL || b[1].Op != OpRemoveACL || b[2].Op != OpRemoveACL {
		t.Fatalf("leaving: %v; want the three lists removed first", opsOf(b))
	}
	for _, c := range b {
		if c.Op == OpResetPort && c.Port.Down {
			t.Errorf("a reset port stays down: %v", c)
		}
	}
	if InPlace(Change{Op: OpResetPort, Port: Port{Name: "p1", Mode: ModeAccess, VLAN: 1}}, State{Ports: map[string]Port{"p1": {Name: "p1", Mode: ModeAccess, VLAN: 1, Down: true}}}) {
		t.Error("a shut port in the idle VLAN counts as reset; a reset port is up")
	}
}

// The flows of a list on a trunk and on a bond match the network's VLAN and every member port.
func TestACLFlowsOfATrunkAndABond(t *testing.T) {
	a := ACL{Name: "x", Cookie: ACLCookie("h", "n"), Port: "bond1", Members: []string{"p3", "p4"}, VLAN: 1002,
		HostMACs: []string{"02:00:00:00:00:03"}, Rules: []ACLRule{{Direction: DirectionIngress, Protocol: "ssh", Action: ActionDeny}}}
	flows, err := a.FlowsOf()
	if err != nil {
		t.Fatal(err)
	}
	var specs []string
	for _, f := range flows {
		specs = append(specs, f.OfctlSpec())
	}
	got := strings.Join(specs, "\n")
	for _, want := range []string{`in_port="p3",dl_vlan=1002,tcp,tp_dst=0x16/0xffff,actions=drop`, `in_port="p4",dl_vlan=1002,tcp6`, `dl_dst=02:00:00:00:00:03,dl_vlan=1002,actions=NORMAL`} {
		if !strings.Contains(got, want) {
			t.Errorf("flows lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `in_port="bond1"`) {
		t.Errorf("a bond's name is no OpenFlow port:\n%s", got)
	}
	if !SameACL(a, ACL{Name: "x", Flows: flows}) || SameACL(a, ACL{Name: "x", Flows: flows[1:]}) {
		t.Error("SameACL must match the same flows and only them")
	}
}

// The state a batch asks of each interface: ports as their change says, resets up, a bond's
// members as the bond, a removed bond's members up; the last change of an interface wins.
func TestAdminStates(t *testing.T) {
	b := Batch{
		{Op: OpAccessPort, Port: Port{Name: "p1", Down: true}},
		{Op: OpEnsureLAG, LAG: LAG{Name: "lag1", Members: []string{"p2", "p3"}, Port: Port{Down: true}}},
		{Op: OpRemoveLAG, LAG: LAG{Name: "lag2", Members: []string{"p4"}}},
		{Op: OpResetPort, Port: Port{Name: "p1"}},
		{Op: OpEnsureVLAN, VLAN: VLAN{ID: 5}},
	}
	want := []AdminState{{Name: "p1"}, {Name: "p2", Down: true, Bond: "lag1"}, {Name: "p3", Down: true, Bond: "lag1"}, {Name: "p4", Bond: "lag2"}}
	if got := AdminStates(b); !slices.Equal(got, want) {
		t.Errorf("AdminStates = %+v, want %+v", got, want)
	}
}
