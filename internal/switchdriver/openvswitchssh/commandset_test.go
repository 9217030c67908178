package openvswitchssh

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// Every change of a batch lands in one ovs-vsctl invocation, as networking-generic-switch's
// commands would be typed, joined with "--".
func TestRenderOneInvocation(t *testing.T) {
	batch := fabric.Batch{
		{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1001}},
		{Op: fabric.OpAccessPort, Port: fabric.Port{Name: "eth1", VLAN: 1001}},
		{Op: fabric.OpTrunkPort, Port: fabric.Port{Name: "eth2", Trunk: []int{1001, 1002}}},
		{Op: fabric.OpTrunkPort, Port: fabric.Port{Name: "eth3", VLAN: 5, Trunk: []int{1001}}},
		{Op: fabric.OpResetPort, Port: fabric.Port{Name: "eth4", VLAN: 1}},
		{Op: fabric.OpResetPort, Port: fabric.Port{Name: "eth5"}},
	}
	got, err := render(fabric.Endpoint{}, fabric.State{}, batch)
	want := []string{"ovs-vsctl --timeout=30" +
		" -- set port eth1 tag=1001 vlan_mode=access -- clear port eth1 trunks" +
		" -- set port eth2 vlan_mode=trunk trunks=1001,1002 -- clear port eth2 tag" +
		" -- set port eth3 tag=5 vlan_mode=native-untagged trunks=1001" +
		" -- set port eth4 tag=1 -- clear port eth4 trunks vlan_mode" +
		" -- clear port eth5 tag trunks vlan_mode"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("render =\n%q, %v\nwant\n%q", got, err, want)
	}
	// An MTU differing from what was read back is set, or cleared on reset; an equal one is not
	// sent again.
	have := fabric.State{Ports: map[string]fabric.Port{"eth1": {Name: "eth1"}, "eth2": {Name: "eth2", MTU: 9000}, "eth3": {Name: "eth3", MTU: 9000}}}
	got, err = render(fabric.Endpoint{}, have, fabric.Batch{
		{Op: fabric.OpAccessPort, Port: fabric.Port{Name: "eth1", Mode: fabric.ModeAccess, VLAN: 7, MTU: 9000}},
		{Op: fabric.OpResetPort, Port: fabric.Port{Name: "eth2", VLAN: 1}},
		{Op: fabric.OpAccessPort, Port: fabric.Port{Name: "eth3", Mode: fabric.ModeAccess, VLAN: 7, MTU: 9000}},
	})
	want = []string{"ovs-vsctl --timeout=30" +
		" -- set interface eth1 mtu_request=9000 -- set port eth1 tag=7 vlan_mode=access -- clear port eth1 trunks" +
		" -- clear interface eth2 mtu_request -- set port eth2 tag=1 -- clear port eth2 trunks vlan_mode" +
		" -- set port eth3 tag=7 vlan_mode=access -- clear port eth3 trunks"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("render with MTUs =\n%q, %v\nwant\n%q", got, err, want)
	}
	if got, _ := render(fabric.Endpoint{}, fabric.State{}, fabric.Batch{{Op: fabric.OpRemoveVLAN, VLAN: fabric.VLAN{ID: 1001}}}); got != nil {
		t.Fatalf("a VLAN-only batch renders %q, want nothing (VLANs are port tags)", got)
	}
	if _, err := render(fabric.Endpoint{Bridge: "br0"}, fabric.State{}, fabric.Batch{{Op: fabric.OpEnsureLAG, LAG: fabric.LAG{Name: "lag1", Members: []string{"eth1", "eth2"},
		MLAG: &fabric.MLAG{Pair: "p1", Domain: 1, Peer: "leaf2"}}}}); !errors.Is(err, fabric.ErrUnsupported) {
		t.Fatalf("ensure-lag of an MLAG: %v, want ErrUnsupported", err)
	}
}

// A bond is made and undone in the batch's one invocation: the members' ports go, the bond
// takes their interfaces; undone, each member is an idle access port again.
func TestRenderBonds(t *testing.T) {
	ep := fabric.Endpoint{Bridge: "br0"}
	got, err := render(ep, fabric.State{}, fabric.Batch{
		{Op: fabric.OpEnsureLAG, LAG: fabric.LAG{Name: "lag1", Members: []string{"eth1", "eth2"}, LACP: true, FastRate: true, Port: fabric.Port{Name: "lag1", Mode: fabric.ModeAccess, VLAN: 1001}}},
		{Op: fabric.OpEnsureLAG, LAG: fabric.LAG{Name: "lag2", Members: []string{"eth3", "eth4"}, Port: fabric.Port{Name: "lag2", Mode: fabric.ModeTrunk, Trunk: []int{1001, 1002}}}},
		{Op: fabric.OpRemoveLAG, LAG: fabric.LAG{Name: "lag3", Members: []string{"eth5", "eth6"}, Port: fabric.Port{Name: "lag3", Mode: fabric.ModeAccess, VLAN: 1}}},
	})
	want := []string{"ovs-vsctl --timeout=30" +
		" -- --if-exists --with-iface del-port br0 eth1 -- --if-exists --with-iface del-port br0 eth2 -- --if-exists del-port br0 lag1" +
		" -- add-bond br0 lag1 eth1 eth2 lacp=active bond_mode=balance-tcp other_config:lacp-time=fast tag=1001 vlan_mode=access" +
		" -- --if-exists --with-iface del-port br0 eth3 -- --if-exists --with-iface del-port br0 eth4 -- --if-exists del-port br0 lag2" +
		" -- add-bond br0 lag2 eth3 eth4 lacp=off bond_mode=active-backup other_config:lacp-time=slow vlan_mode=trunk trunks=1001,1002" +
		" -- --if-exists del-port br0 lag3 -- add-port br0 eth5 tag=1 -- add-port br0 eth6 tag=1"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("render =\n%q, %v\nwant\n%q", got, err, want)
	}
	if _, err := render(fabric.Endpoint{}, fabric.State{}, fabric.Batch{{Op: fabric.OpEnsureLAG, LAG: fabric.LAG{Name: "lag1", Members: []string{"eth1", "eth2"}}}}); err == nil || !strings.Contains(err.Error(), "set the switch's bridge") {
		t.Fatalf("a bond without a bridge: %v, want an error asking for the bridge", err)
	}
}

func TestParseState(t *testing.T) {
	list := `{"data":[["eth1",1001,["set",[]],"access"],["eth2",["set",[]],["set",[1001,1002]],"trunk"],["eth3",1,["set",[]],["set",[]]],["other",7,["set",[]],["set",[]]]],"headings":["name","tag","trunks","vlan_mode"]}`
	mtus := `{"data":[["eth1",["set",[]]],["eth2",9000]],"headings":["name","mtu_request"]}`
	st, err := parseState(fabric.Endpoint{Bridge: "br0"}, []string{"eth1", "eth2", "eth3", "other", "absent"}, []string{list, mtus, "eth1\neth2\neth3\n"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]fabric.Port{
		"eth1": {Name: "eth1", Mode: fabric.ModeAccess, VLAN: 1001},
		"eth2": {Name: "eth2", Mode: fabric.ModeTrunk, Trunk: []int{1001, 1002}, MTU: 9000},
		"eth3": {Name: "eth3", Mode: fabric.ModeAccess, VLAN: 1},
	}
	if !reflect.DeepEqual(st.Ports, want) {
		t.Fatalf("ports = %+v, want %+v (other is on another bridge, absent does not exist)", st.Ports, want)
	}
	if !reflect.DeepEqual(st.VLANs, []fabric.VLAN{{ID: 1}, {ID: 1001}, {ID: 1002}}) {
		t.Fatalf("VLANs = %v", st.VLANs)
	}
}
