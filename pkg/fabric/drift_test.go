package fabric

import (
	"reflect"
	"testing"
)

func TestDrift(t *testing.T) {
	set := []Port{
		{Name: "p1", Mode: ModeAccess, VLAN: 1001},
		{Name: "p2", Mode: ModeTrunk, Trunk: []int{1001, 1002}},
		{Name: "p3", Mode: ModeAccess, VLAN: 1},
		{Name: "p4", Mode: ModeAccess, VLAN: 1002},
	}
	have := State{Ports: map[string]Port{
		"p1": {Name: "p1", Mode: ModeAccess, VLAN: 7},                    // changed by hand
		"p2": {Name: "p2", Mode: ModeTrunk, Trunk: []int{1001, 1002}},    // as set
		"p3": {Name: "p3", Mode: ModeTrunk, Trunk: []int{1001}, VLAN: 1}, // changed by hand
		"p9": {Name: "p9", Mode: ModeAccess, VLAN: 5},                    // never configured
	}}
	got := Drift(set, have)
	want := []string{
		"port p1: set access vlan 1001, found access vlan 7",
		"port p3: set access vlan 1, found trunk vlans [1001] native 1",
		"port p4: set access vlan 1002, not on the switch",
	}
	var lines []string
	for _, d := range got {
		lines = append(lines, d.String())
	}
	if !reflect.DeepEqual(lines, want) {
		t.Fatalf("Drift =\n%q\nwant\n%q", lines, want)
	}
	if d := Drift(set[1:2], have); len(d) != 0 {
		t.Fatalf("a port as set drifted: %v", d)
	}
}

func TestWithoutRepairsKeepsRealChanges(t *testing.T) {
	drifted := []DriftedPort{
		{Set: Port{Name: "p1", Mode: ModeAccess, VLAN: 1001}, Found: &Port{Name: "p1", Mode: ModeAccess, VLAN: 7}},
		{Set: Port{Name: "p2", Mode: ModeAccess, VLAN: 1001}, Found: &Port{Name: "p2", Mode: ModeAccess, VLAN: 7}},
	}
	// p1's host still wants 1001 (only a repair); p2's host left (a real change: reset).
	want := State{Ports: map[string]Port{"p1": {Name: "p1", Mode: ModeAccess, VLAN: 1001}, "p3": {Name: "p3", Mode: ModeAccess, VLAN: 1002}}}
	b := Batch{
		{Op: OpAccessPort, Port: Port{Name: "p1", Mode: ModeAccess, VLAN: 1001}},
		{Op: OpAccessPort, Port: Port{Name: "p3", Mode: ModeAccess, VLAN: 1002}},
		{Op: OpResetPort, Port: Port{Name: "p2", Mode: ModeAccess, VLAN: 1}},
		{Op: OpEnsureVLAN, VLAN: VLAN{ID: 1002}},
	}
	got := WithoutRepairs(b, drifted, want, 1)
	if !reflect.DeepEqual(got, b[1:]) {
		t.Fatalf("WithoutRepairs = %v, want %v", got, b[1:])
	}
	if len(b) != 4 {
		t.Fatal("the batch given was changed")
	}
}
