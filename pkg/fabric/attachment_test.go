package fabric

import (
	"reflect"
	"testing"
)

func TestParseVLANList(t *testing.T) {
	got, err := ParseVLANList([]string{"200-202", "100", "201"})
	if err != nil || !reflect.DeepEqual(got, []int{100, 200, 201, 202}) {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, bad := range [][]string{{"0"}, {"4095"}, {"300-200"}, {"a"}, {"1-"}} {
		if _, err := ParseVLANList(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := ParseVLANList([]string{"100", "300-200"}); err == nil || err.Error() != `allowedVLANs[1] "300-200": the range ends before it starts; write 200-300` {
		t.Errorf("error %v", err)
	}
}

// A trunk attachment becomes a trunk port of the allowed VLANs with the native one untagged, and
// every VLAN it carries is present on the switch.
func TestAttachmentDesired(t *testing.T) {
	wants := append(AttachmentWants("leaf1", "p1", true, 10, []int{100, 101}, 9000), AttachmentWants("leaf1", "p2", false, 20, nil, 0)...)
	st := Desired(wants)["leaf1"]
	if p := st.Ports["p1"]; p.Mode != ModeTrunk || p.VLAN != 10 || !reflect.DeepEqual(p.Trunk, []int{100, 101}) || p.MTU != 9000 {
		t.Fatalf("p1 = %+v", p)
	}
	if p := st.Ports["p2"]; p.Mode != ModeAccess || p.VLAN != 20 {
		t.Fatalf("p2 = %+v", p)
	}
	if !reflect.DeepEqual(st.VLANs, []VLAN{{ID: 10}, {ID: 20}, {ID: 100}, {ID: 101}}) {
		t.Fatalf("VLANs = %v", st.VLANs)
	}
}

// A native VLAN among the allowed ones is carried untagged only, as the switches read it back;
// a trunk of its native VLAN alone is an access port.
func TestAttachmentNativeAmongAllowed(t *testing.T) {
	st := Desired(append(AttachmentWants("leaf1", "p1", true, 100, []int{100, 101, 102}, 0), AttachmentWants("leaf1", "p2", true, 7, []int{7}, 0)...))["leaf1"]
	if p := st.Ports["p1"]; p.Mode != ModeTrunk || p.VLAN != 100 || !reflect.DeepEqual(p.Trunk, []int{101, 102}) {
		t.Fatalf("p1 = %+v, want trunk [101 102] native 100", p)
	}
	if p := st.Ports["p2"]; p.Mode != ModeAccess || p.VLAN != 7 || p.Trunk != nil {
		t.Fatalf("p2 = %+v, want access 7", p)
	}
	have := State{VLANs: st.VLANs, Ports: map[string]Port{"p1": {Name: "p1", Mode: ModeTrunk, VLAN: 100, Trunk: []int{101, 102}}, "p2": {Name: "p2", Mode: ModeAccess, VLAN: 7}}}
	if b := Diff(st, have, Record{}, 1); len(b) != 0 {
		t.Fatalf("a switch reading back what was set gets %v", b)
	}
}
