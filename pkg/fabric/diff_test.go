package fabric

import (
	"reflect"
	"testing"
)

func access(name string, vlan int) Port { return Port{Name: name, Mode: ModeAccess, VLAN: vlan} }

func vlans(ids ...int) []VLAN {
	out := make([]VLAN, len(ids))
	for i, id := range ids {
		out[i] = VLAN{ID: id}
	}
	return out
}

func TestDiff(t *testing.T) {
	tests := []struct {
		name string
		want State
		have State
		rec  Record
		out  []string
	}{{
		name: "a new host: the VLAN first, then its port",
		want: State{VLANs: vlans(1001), Ports: map[string]Port{"p1": access("p1", 1001)}},
		have: State{VLANs: vlans(1), Ports: map[string]Port{"p1": access("p1", 1)}},
		out:  []string{"ensure-vlan 1001", "access-port p1 vlan 1001"},
	}, {
		name: "nothing changed: no change at all",
		want: State{VLANs: vlans(1001), Ports: map[string]Port{"p1": access("p1", 1001)}},
		have: State{VLANs: vlans(1, 1001), Ports: map[string]Port{"p1": access("p1", 1001)}},
		rec:  Record{Ports: []string{"p1"}, VLANs: []int{1001}},
	}, {
		name: "a host leaves: its port goes idle, then the unused VLAN goes",
		want: State{Ports: map[string]Port{}},
		have: State{VLANs: vlans(1001), Ports: map[string]Port{"p1": access("p1", 1001)}},
		rec:  Record{Ports: []string{"p1"}, VLANs: []int{1001}},
		out:  []string{"reset-port p1 vlan 1", "remove-vlan 1001"},
	}, {
		name: "a port the controller never configured is never touched",
		want: State{VLANs: vlans(1001), Ports: map[string]Port{"p1": access("p1", 1001)}},
		have: State{VLANs: vlans(1001, 7), Ports: map[string]Port{"p1": access("p1", 1001), "p9": access("p9", 7)}},
		rec:  Record{Ports: []string{"p1"}, VLANs: []int{1001}},
	}, {
		name: "a VLAN another wanted port still carries stays",
		want: State{VLANs: vlans(1001), Ports: map[string]Port{"p2": access("p2", 1001)}},
		have: State{VLANs: vlans(1001), Ports: map[string]Port{"p1": access("p1", 1001), "p2": access("p2", 1001)}},
		rec:  Record{Ports: []string{"p1", "p2"}, VLANs: []int{1001}},
		out:  []string{"reset-port p1 vlan 1"},
	}, {
		name: "an access port becomes a trunk",
		want: State{VLANs: vlans(1001, 1002), Ports: map[string]Port{"p1": {Name: "p1", Mode: ModeTrunk, Trunk: []int{1001, 1002}}}},
		have: State{VLANs: vlans(1001), Ports: map[string]Port{"p1": access("p1", 1001)}},
		rec:  Record{Ports: []string{"p1"}, VLANs: []int{1001}},
		out:  []string{"ensure-vlan 1002", "trunk-port p1 vlans [1001 1002] native 0"},
	}, {
		name: "a recorded port already idle is left alone",
		want: State{Ports: map[string]Port{}},
		have: State{Ports: map[string]Port{"p1": access("p1", 1)}},
		rec:  Record{Ports: []string{"p1"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := []string{}
			for _, c := range Diff(tt.want, tt.have, tt.rec, 1) {
				got = append(got, c.String())
			}
			if tt.out == nil {
				tt.out = []string{}
			}
			if !reflect.DeepEqual(got, tt.out) {
				t.Errorf("Diff:\n got %q\nwant %q", got, tt.out)
			}
		})
	}
}

func TestDesiredMergesTrunksAndListsVLANs(t *testing.T) {
	got := Desired([]PortWant{
		{Switch: "s1", Port: "p1", Mode: ModeTrunk, VLAN: 1002},
		{Switch: "s1", Port: "p1", Mode: ModeTrunk, VLAN: 1001},
		{Switch: "s1", Port: "p2", Mode: ModeAccess, VLAN: 1003},
		{Switch: "s2", Port: "p1", Mode: ModeAccess, VLAN: 1001},
	})
	want := map[string]State{
		"s1": {VLANs: vlans(1001, 1002, 1003), Ports: map[string]Port{
			"p1": {Name: "p1", Mode: ModeTrunk, Trunk: []int{1001, 1002}},
			"p2": access("p2", 1003),
		}},
		"s2": {VLANs: vlans(1001), Ports: map[string]Port{"p1": access("p1", 1001)}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Desired:\n got %+v\nwant %+v", got, want)
	}
}

func TestPlace(t *testing.T) {
	// The seed's NIC0: two 1000 Mb/s cards, a 1500 Mb/s card and a 1500 Mb/s SmartNIC.
	seed := []Card{{Speed: 1000}, {Speed: 1000}, {Speed: 1500}, {Speed: 1500, SmartNIC: true}}
	tests := []struct {
		name  string
		cards []Card
		needs []NetworkNeed
		want  [][]string
		err   string
	}{{
		name:  "the seed's control (2 cards) and data (smartNIC) networks",
		cards: seed,
		needs: []NetworkNeed{{Name: "control", Speed: 1000, Cards: 2}, {Name: "data", Speed: 1000, SmartNIC: true, Cards: 1}},
		want:  [][]string{{"control"}, {"control"}, nil, {"data"}},
	}, {
		name:  "the slowest card that meets the hint wins",
		cards: []Card{{Speed: 25000}, {Speed: 10000}, {Speed: 1000}},
		needs: []NetworkNeed{{Name: "n", Speed: 5000, Cards: 1}},
		want:  [][]string{nil, {"n"}, nil},
	}, {
		name:  "trunk networks share one card: a trunk port of both",
		cards: []Card{{Speed: 10000}},
		needs: []NetworkNeed{{Name: "control", Speed: 1000, Trunk: true}, {Name: "data", Speed: 1000, Trunk: true}},
		want:  [][]string{{"control", "data"}},
	}, {
		name:  "an access network never shares a card",
		cards: []Card{{Speed: 10000}},
		needs: []NetworkNeed{{Name: "control", Speed: 1000, Trunk: true}, {Name: "data", Speed: 1000}},
		err:   "network data needs 1 free card(s) of at least 1000 Mb/s with smartNIC=false; the host has 0",
	}, {
		name:  "a trunk network joins the trunk card that meets its hint, not the access card",
		cards: []Card{{Speed: 1000}, {Speed: 10000}, {Speed: 25000}},
		needs: []NetworkNeed{{Name: "pxe", Speed: 1000}, {Name: "a", Speed: 10000, Trunk: true}, {Name: "b", Speed: 1000, Trunk: true}},
		want:  [][]string{{"pxe"}, {"a", "b"}, nil},
	}, {
		name:  "a trunk network of two cards takes the trunk card, then a free one",
		cards: []Card{{Speed: 1000}, {Speed: 1000}, {Speed: 1000}},
		needs: []NetworkNeed{{Name: "a", Speed: 1000, Trunk: true}, {Name: "b", Speed: 1000, Cards: 2, Trunk: true}},
		want:  [][]string{{"a", "b"}, {"b"}, nil},
	}, {
		name:  "too few fitting cards",
		cards: []Card{{Speed: 1000}},
		needs: []NetworkNeed{{Name: "fast", Speed: 10000, Cards: 1}},
		err:   "network fast needs 1 free card(s) of at least 10000 Mb/s with smartNIC=false; the host has 0",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Place(tt.cards, tt.needs)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("Place error = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Place = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestPlanVLANs(t *testing.T) {
	r := VLANRange{First: 1000, Last: 1009}
	plan := PlanVLANs(r, []VLANRequest{{Network: "a"}, {Network: "b", Pin: 1005}, {Network: "c"}},
		map[int]string{1000: "a", 1001: "b", 1002: "gone"})
	if !reflect.DeepEqual(plan.Keep, map[string]int{"a": 1000}) {
		t.Errorf("Keep = %v, want a kept at 1000", plan.Keep)
	}
	if !reflect.DeepEqual(plan.Release, []int{1001, 1002}) {
		t.Errorf("Release = %v, want b's unpinned id and the removed network's", plan.Release)
	}
	if !reflect.DeepEqual(plan.Need, []VLANRequest{{Network: "b", Pin: 1005}, {Network: "c"}}) {
		t.Errorf("Need = %v", plan.Need)
	}
	if got := r.NextFree(map[int]bool{1000: true, 1001: true}); got != 1002 {
		t.Errorf("NextFree = %d, want 1002", got)
	}
	full := map[int]bool{}
	for i := 1000; i <= 1009; i++ {
		full[i] = true
	}
	if got := r.NextFree(full); got != 0 {
		t.Errorf("NextFree of a full range = %d, want 0", got)
	}
}

func TestParseVLANRange(t *testing.T) {
	for in, want := range map[string]string{
		"1000-1999": "",
		"0-10":      "vlanRange \"0-10\" must lie within 1-4094",
		"10-5":      "vlanRange \"10-5\" starts after it ends; write the lower id first",
		"10":        "vlanRange \"10\" must read first-last, e.g. 1000-1999",
	} {
		_, err := ParseVLANRange(in)
		if (err == nil) != (want == "") || (err != nil && err.Error() != want) {
			t.Errorf("ParseVLANRange(%q) = %v, want %q", in, err, want)
		}
	}
}
