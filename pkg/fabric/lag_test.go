package fabric

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestLAGName(t *testing.T) {
	a := LAGName("bm0", "control")
	if a != LAGName("bm0", "control") {
		t.Fatalf("LAGName is not stable")
	}
	if !regexp.MustCompile(`^[a-z0-9]{1,15}$`).MatchString(a) {
		t.Fatalf("LAGName %q is not a short port name", a)
	}
	for _, other := range []string{LAGName("bm1", "control"), LAGName("bm0", "data"), LAGName("bm0c", "ontrol")} {
		if other == a {
			t.Fatalf("LAGName gives %q to two host/network pairs", a)
		}
	}
}

func TestPlanLAG(t *testing.T) {
	pairs := []MLAGPair{{Name: "p1", Switches: [2]string{"tor1", "tor2"}, Domain: 10}}
	oses := map[string]string{"tor1": "eos", "tor2": "eos", "ovs1": "openvswitch", "ovs2": "openvswitch", "tor3": "eos", "leaf1": "sonic", "leaf2": "sonic"}
	osOf := func(sw string) string { return oses[sw] }
	tests := []struct {
		name     string
		cards    []BondCard
		pairs    []MLAGPair
		wantPair string
		wantErr  string
	}{
		{name: "two cards on one switch: a LAG there", cards: []BondCard{{"ovs1", "eth1"}, {"ovs1", "eth2"}}},
		{name: "two cards on a declared pair: an MLAG", cards: []BondCard{{"tor2", "Ethernet1"}, {"tor1", "Ethernet1"}}, pairs: pairs, wantPair: "p1"},
		{name: "two cards on a SONiC pair: an MCLAG", cards: []BondCard{{"leaf1", "Ethernet0"}, {"leaf2", "Ethernet0"}},
			pairs: []MLAGPair{{Name: "leaves", Switches: [2]string{"leaf1", "leaf2"}, Domain: 10}}, wantPair: "leaves"},
		{name: "two switches not declared a pair", cards: []BondCard{{"ovs1", "eth1"}, {"ovs2", "eth1"}}, pairs: pairs,
			wantErr: "host bm0: network control bonds cards on switches ovs1 and ovs2, which are not an MLAG pair: declare them in the NetworkDevice's spec.mlagPairs"},
		{name: "a pair of switches without multi-chassis LAG",
			cards: []BondCard{{"ovs1", "eth1"}, {"ovs2", "eth1"}}, pairs: []MLAGPair{{Name: "p2", Switches: [2]string{"ovs2", "ovs1"}, Domain: 1}},
			wantErr: "host bm0: network control bonds cards on switches ovs1 and ovs2 (MLAG pair p2), but switch ovs1 runs networkOS openvswitch, which has no multi-chassis LAG"},
		{name: "three switches", cards: []BondCard{{"tor1", "e1"}, {"tor2", "e1"}, {"tor3", "e1"}}, pairs: pairs,
			wantErr: "network control bonds cards on 3 switches (tor1, tor2, tor3)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := PlanLAG("bm0", "control", tt.cards, tt.pairs, osOf)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if plan.Name != LAGName("bm0", "control") {
				t.Errorf("name %q", plan.Name)
			}
			got := ""
			if plan.MLAG != nil {
				got = plan.MLAG.Name
			}
			if got != tt.wantPair {
				t.Errorf("pair %q, want %q", got, tt.wantPair)
			}
		})
	}
}

func TestDesiredLAG(t *testing.T) {
	lacp := &LAGWant{Name: "lagA", LACP: true, FastRate: true}
	pair := MLAGPair{Name: "p1", Switches: [2]string{"tor1", "tor2"}, Domain: 10}
	got := Desired([]PortWant{
		{Switch: "s1", Port: "eth2", Mode: ModeAccess, VLAN: 1001, LAG: lacp},
		{Switch: "s1", Port: "eth1", Mode: ModeAccess, VLAN: 1001, LAG: lacp},
		{Switch: "s1", Port: "eth3", Mode: ModeAccess, VLAN: 1002},
		{Switch: "s1", Port: "eth4", Mode: ModeTrunk, VLAN: 1003, LAG: &LAGWant{Name: "lagB"}},
		{Switch: "s1", Port: "eth4", Mode: ModeTrunk, VLAN: 1004, LAG: &LAGWant{Name: "lagB"}},
		{Switch: "s1", Port: "eth5", Mode: ModeTrunk, VLAN: 1003, LAG: &LAGWant{Name: "lagB"}},
		{Switch: "tor1", Port: "Ethernet1", Mode: ModeAccess, VLAN: 1001, LAG: &LAGWant{Name: "lagM", LACP: true, MLAG: MLAGFor(&pair, "tor1")}},
	})
	s1 := got["s1"]
	want := map[string]LAG{
		"lagA": {Name: "lagA", Members: []string{"eth1", "eth2"}, LACP: true, FastRate: true, Port: access("lagA", 1001)},
		"lagB": {Name: "lagB", Members: []string{"eth4", "eth5"}, Port: Port{Name: "lagB", Mode: ModeTrunk, Trunk: []int{1003, 1004}}},
	}
	if !reflect.DeepEqual(s1.LAGs, want) {
		t.Errorf("LAGs:\n got %+v\nwant %+v", s1.LAGs, want)
	}
	if !reflect.DeepEqual(s1.Ports, map[string]Port{"eth3": access("eth3", 1002)}) {
		t.Errorf("ports: a bond's members must not be ports of their own: %+v", s1.Ports)
	}
	if !reflect.DeepEqual(s1.VLANs, vlans(1001, 1002, 1003, 1004)) {
		t.Errorf("VLANs %v: a bond's VLANs are on the switch", s1.VLANs)
	}
	if m := got["tor1"].LAGs["lagM"].MLAG; m == nil || *m != (MLAG{Pair: "p1", Domain: 10, Peer: "tor2"}) {
		t.Errorf("the MLAG half on tor1: %+v", m)
	}
}

func TestDiffLAG(t *testing.T) {
	bond := LAG{Name: "lagA", Members: []string{"eth1", "eth2"}, LACP: true, Port: access("lagA", 1001)}
	tests := []struct {
		name string
		want State
		have State
		rec  Record
		out  []string
	}{{
		name: "a host joins bonded: the VLAN, then the bond over its two idle ports",
		want: State{VLANs: vlans(1001), LAGs: map[string]LAG{"lagA": bond}},
		have: State{VLANs: vlans(1), Ports: map[string]Port{"eth1": access("eth1", 1), "eth2": access("eth2", 1)}},
		out:  []string{"ensure-vlan 1001", "ensure-lag lagA lacp-slow bond [eth1 eth2] access vlan 1001"},
	}, {
		name: "nothing changed: no change at all",
		want: State{VLANs: vlans(1001), LAGs: map[string]LAG{"lagA": bond}},
		have: State{VLANs: vlans(1001), LAGs: map[string]LAG{"lagA": {Name: "lagA", Members: []string{"eth2", "eth1"}, LACP: true, Port: access("lagA", 1001)}}},
		rec:  Record{LAGs: []string{"lagA"}, VLANs: []int{1001}},
	}, {
		name: "the host leaves: the bond goes, its members idle, then the VLAN",
		want: State{},
		have: State{VLANs: vlans(1001), LAGs: map[string]LAG{"lagA": bond}},
		rec:  Record{LAGs: []string{"lagA"}, VLANs: []int{1001}},
		out:  []string{"remove-lag lagA [eth1 eth2] to vlan 1", "remove-vlan 1001"},
	}, {
		name: "the mode changes to static: the bond is made again",
		want: State{VLANs: vlans(1001), LAGs: map[string]LAG{"lagA": {Name: "lagA", Members: []string{"eth1", "eth2"}, Port: access("lagA", 1001)}}},
		have: State{VLANs: vlans(1001), LAGs: map[string]LAG{"lagA": bond}},
		rec:  Record{LAGs: []string{"lagA"}, VLANs: []int{1001}},
		out:  []string{"ensure-lag lagA static bond [eth1 eth2] access vlan 1001"},
	}, {
		name: "a network becomes bonded: its ports are the bond's, not reset",
		want: State{VLANs: vlans(1001), LAGs: map[string]LAG{"lagA": bond}},
		have: State{VLANs: vlans(1001), Ports: map[string]Port{"eth1": access("eth1", 1001), "eth2": access("eth2", 1001)}},
		rec:  Record{Ports: []string{"eth1", "eth2"}, VLANs: []int{1001}},
		out:  []string{"ensure-lag lagA lacp-slow bond [eth1 eth2] access vlan 1001"},
	}, {
		name: "a bond not made by the controller is never touched",
		want: State{},
		have: State{VLANs: vlans(7), LAGs: map[string]LAG{"bond9": {Name: "bond9", Members: []string{"eth8", "eth9"}, Port: access("bond9", 7)}}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, c := range Diff(tt.want, tt.have, tt.rec, 1) {
				got = append(got, c.String())
			}
			if !reflect.DeepEqual(got, tt.out) {
				t.Errorf("got  %q\nwant %q", got, tt.out)
			}
		})
	}
	rec := RecordOf(State{LAGs: map[string]LAG{"lagA": bond}, VLANs: vlans(1001)})
	if !reflect.DeepEqual(rec.LAGs, []string{"lagA"}) {
		t.Errorf("RecordOf keeps the bonds it made: %+v", rec)
	}
}

func TestDriftOfABond(t *testing.T) {
	set := []Port{access("lagA", 1001)}
	have := State{LAGs: map[string]LAG{"lagA": {Name: "lagA", Members: []string{"eth1", "eth2"}, Port: access("lagA", 7)}}}
	d := Drift(set, have)
	if len(d) != 1 || d[0].Found == nil || d[0].Found.VLAN != 7 {
		t.Fatalf("a bond retagged at the switch is drift: %v", d)
	}
	have.LAGs["lagA"] = LAG{Name: "lagA", Port: access("lagA", 1001)}
	if d := Drift(set, have); len(d) != 0 {
		t.Fatalf("a bond as set is no drift: %v", d)
	}
}

// Under driftPolicy report a bond retagged at the switch is left as found, while a bond whose
// wanted VLAN changed still gets its change.
func TestWithoutRepairsOfABond(t *testing.T) {
	set := access("lagA", 1001)
	bond := LAG{Name: "lagA", Members: []string{"eth1", "eth2"}, LACP: true, Port: set}
	have := State{VLANs: vlans(7), LAGs: map[string]LAG{"lagA": {Name: "lagA", Members: []string{"eth1", "eth2"}, LACP: true, Port: access("lagA", 7)}}}
	drifted := Drift([]Port{set}, have)
	want := State{VLANs: vlans(1001), LAGs: map[string]LAG{"lagA": bond}}
	b := Diff(want, have, Record{LAGs: []string{"lagA"}, VLANs: []int{1001}}, 1)
	if got := WithoutRepairs(b, drifted, want, 1); len(got) != 1 || got[0].Op != OpEnsureVLAN {
		t.Fatalf("a drifted bond under report: %v, want only the VLAN ensured", got)
	}
	moved := bond
	moved.Port = access("lagA", 1002)
	want = State{VLANs: vlans(1002), LAGs: map[string]LAG{"lagA": moved}}
	b = Diff(want, have, Record{LAGs: []string{"lagA"}, VLANs: []int{1001}}, 1)
	if got := WithoutRepairs(b, drifted, want, 1); !slices.ContainsFunc(got, func(c Change) bool { return c.Op == OpEnsureLAG }) {
		t.Fatalf("a bond whose network moved: %v, want its ensure-lag kept", got)
	}
}
