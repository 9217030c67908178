package openvswitchssh

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// The exact commands of a batch with lists and port state: the database's changes in one
// ovs-vsctl, every list in one ovs-ofctl bundle (each cookie deleted in full, then its flows),
// then a port-mod and a wait for each port whose state differs from what was read.
func TestRenderACLsAndPortState(t *testing.T) {
	ep := fabric.Endpoint{Bridge: "br0"}
	cookie := fabric.ACLCookie("h1", "control")
	gone := fabric.ACLCookie("h2", "control")
	ensure := fabric.ACL{Name: fabric.ACLName("h1", "control"), Cookie: cookie, Port: "eth1", VLAN: 1001, HostMACs: []string{"02:00:5E:00:53:01"},
		Rules: []fabric.ACLRule{{Direction: fabric.DirectionIngress, Protocol: "ssh", Action: fabric.ActionDeny, Remote: "10.0.0.0/8"}}}
	have := fabric.State{
		Ports: map[string]fabric.Port{"eth1": {Name: "eth1"}, "eth2": {Name: "eth2", Down: true}, "eth3": {Name: "eth3", Down: true}},
		LAGs:  map[string]fabric.LAG{"lag1": {Name: "lag1", Members: []string{"eth5", "eth6"}, Port: fabric.Port{Down: true}}},
	}
	got, err := render(ep, have, fabric.Batch{
		{Op: fabric.OpAccessPort, Port: fabric.Port{Name: "eth1", Mode: fabric.ModeAccess, VLAN: 1001, Down: true}},
		{Op: fabric.OpAccessPort, Port: fabric.Port{Name: "eth2", Mode: fabric.ModeAccess, VLAN: 1001, Down: true}}, // already down
		{Op: fabric.OpResetPort, Port: fabric.Port{Name: "eth3", VLAN: 1}},
		{Op: fabric.OpEnsureLAG, LAG: fabric.LAG{Name: "lag2", Members: []string{"eth7", "eth8"}, Port: fabric.Port{Name: "lag2", Mode: fabric.ModeAccess, VLAN: 1001, Down: true}}},
		{Op: fabric.OpRemoveLAG, LAG: fabric.LAG{Name: "lag1", Members: []string{"eth5", "eth6"}, Port: fabric.Port{Name: "lag1", Mode: fabric.ModeAccess, VLAN: 1}}},
		{Op: fabric.OpEnsureACL, ACL: ensure},
		{Op: fabric.OpRemoveACL, ACL: fabric.ACL{Name: fabric.ACLNameOfCookie(gone), Cookie: gone}},
	})
	if err != nil {
		t.Fatal(err)
	}
	c, g := fmt.Sprintf("%#x", cookie), fmt.Sprintf("%#x", gone)
	want := []string{
		got[0], // the ovs-vsctl line, as TestRenderOneInvocation and TestRenderBonds check it
		`printf '%s\n'` +
			" 'delete cookie=" + c + "/-1'" +
			` 'add cookie=` + c + `,priority=30000,in_port="eth1",dl_vlan=1001,tcp,nw_dst=10.0.0.0/8,tp_dst=0x16/0xffff,actions=drop'` +
			` 'add cookie=` + c + `,priority=29999,in_port="eth1",dl_vlan=1001,actions=NORMAL'` +
			` 'add cookie=` + c + `,priority=29999,dl_dst=02:00:5e:00:53:01,dl_vlan=1001,actions=NORMAL'` +
			" 'delete cookie=" + g + "/-1'" +
			" | ovs-ofctl -O OpenFlow15 --bundle add-flows br0 -",
		"ovs-ofctl -O OpenFlow15 mod-port br0 eth1 down",
		"ovs-ofctl -O OpenFlow15 mod-port br0 eth3 up",
		"ovs-ofctl -O OpenFlow15 mod-port br0 eth7 down",
		"ovs-ofctl -O OpenFlow15 mod-port br0 eth8 down",
		"ovs-ofctl -O OpenFlow15 mod-port br0 eth5 up",
		"ovs-ofctl -O OpenFlow15 mod-port br0 eth6 up",
		"ovs-vsctl --timeout=30 wait-until Interface eth1 admin_state=down",
		"ovs-vsctl --timeout=30 wait-until Interface eth3 admin_state=up",
		"ovs-vsctl --timeout=30 wait-until Interface eth7 admin_state=down",
		"ovs-vsctl --timeout=30 wait-until Interface eth8 admin_state=down",
		"ovs-vsctl --timeout=30 wait-until Interface eth5 admin_state=up",
		"ovs-vsctl --timeout=30 wait-until Interface eth6 admin_state=up",
	}
	if !strings.HasPrefix(got[0], "ovs-vsctl --timeout=30 -- set port eth1 tag=1001") || !reflect.DeepEqual(got, want) {
		t.Fatalf("render =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Lists and state alone: no ovs-vsctl line; nothing at all when nothing differs.
	got, err = render(ep, fabric.State{}, fabric.Batch{{Op: fabric.OpRemoveACL, ACL: fabric.ACL{Name: fabric.ACLNameOfCookie(gone), Cookie: gone}}})
	if err != nil || len(got) != 1 || !strings.HasSuffix(got[0], "| ovs-ofctl -O OpenFlow15 --bundle add-flows br0 -") {
		t.Fatalf("a removal alone = %q, %v; want the one bundle", got, err)
	}
	if _, err := render(fabric.Endpoint{}, fabric.State{}, fabric.Batch{{Op: fabric.OpEnsureACL, ACL: ensure}}); err == nil || !strings.Contains(err.Error(), "set the switch's bridge") {
		t.Fatalf("a list without a bridge: %v; want an error asking for the bridge", err)
	}
	bad := ensure
	bad.Cookie = 0x1234
	if _, err := render(ep, fabric.State{}, fabric.Batch{{Op: fabric.OpEnsureACL, ACL: bad}}); err == nil || !strings.Contains(err.Error(), "not metalwire's") {
		t.Fatalf("a list of another cookie: %v; want a refusal", err)
	}
}

// dump-flows lines read back as the flows OfctlSpec wrote, in every form ovs-ofctl prints them;
// anything metalwire never writes is refused naming the line.
func TestParseFlows(t *testing.T) {
	out := "OFPST_FLOW reply (OF1.5) (xid=0x2):\n" +
		" cookie=0x6d77000000000001, priority=30000,tcp,in_port=p1,dl_vlan=1002,tp_dst=22 actions=drop\n" +
		" cookie=0x6d77000000000001, priority=29999,tcp6,dl_dst=02:00:00:00:00:01,ipv6_src=2001:db8::/32,tp_dst=0x400/0xfc00 actions=NORMAL\n" +
		" cookie=0x6d77000000000001, priority=29998,ip,in_port=\"p 2\",nw_dst=10.0.0.1 actions=NORMAL\n"
	got, err := parseFlows(out)
	want := []fabric.Flow{
		{Cookie: 0x6d77000000000001, Priority: 30000, Proto: "tcp", InPort: "p1", VLAN: 1002, TPDst: &fabric.PortMask{Value: 22, Mask: 0xffff}, Drop: true},
		{Cookie: 0x6d77000000000001, Priority: 29999, Proto: "tcp6", DLDst: "02:00:00:00:00:01", NWSrc: "2001:db8::/32", TPDst: &fabric.PortMask{Value: 0x400, Mask: 0xfc00}},
		{Cookie: 0x6d77000000000001, Priority: 29998, Proto: "ip", InPort: "p 2", NWDst: "10.0.0.1/32"},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("parseFlows = %+v, %v\nwant %+v", got, err, want)
	}
	for i, f := range want[:2] { // the spelling OfctlSpec writes reads the same
		match, action, _ := strings.Cut(f.OfctlSpec(), ",actions=")
		if g, err := parseFlow(match + " actions=" + action); err != nil || !reflect.DeepEqual(g, f) {
			t.Errorf("flow %d: OfctlSpec reads back as %+v, %v", i, g, err)
		}
	}
	for _, line := range []string{
		" cookie=0x6d77000000000001, priority=1,in_port=p1 actions=output:2",
		" cookie=0x6d77000000000001, priority=1,in_port=p1,nw_tos=4 actions=NORMAL",
		" cookie=0x6d77000000000001, table=3, priority=1,in_port=p1 actions=NORMAL",
		" cookie=0x6d77000000000001, priority=1,arp,in_port=p1 actions=NORMAL",
	} {
		if _, err := parseFlows(line); err == nil || !strings.Contains(err.Error(), "metalwire") {
			t.Errorf("parseFlows(%q) = %v; want a refusal", line, err)
		}
	}
}

// The state read back: a port's admin_state, a bond down only when every member is, and the
// flows of the lists asked about.
func TestParseStateOfACLsAndPortState(t *testing.T) {
	list := `{"data":[["eth1",1001,["set",[]],"access",["uuid","u1"],["set",[]],["set",[]],["map",[]]],` +
		`["lag1",1001,["set",[]],"access",["set",[["uuid","u5"],["uuid","u6"]]],"balance-tcp","active",["map",[]]],` +
		`["lag2",1001,["set",[]],"access",["set",[["uuid","u7"],["uuid","u8"]]],"balance-tcp","active",["map",[]]]],"headings":[]}`
	ifaces := `{"data":[["eth1",["set",[]],["uuid","u1"],"down"],["eth5",["set",[]],["uuid","u5"],"down"],["eth6",["set",[]],["uuid","u6"],"down"],` +
		`["eth7",["set",[]],["uuid","u7"],"down"],["eth8",["set",[]],["uuid","u8"],"up"]],"headings":[]}`
	name := fabric.ACLName("h1", "control")
	flows := fmt.Sprintf(" cookie=%#x, priority=29999,in_port=eth1 actions=NORMAL\n cookie=%#x, priority=1,in_port=eth1 actions=drop\n", fabric.ACLCookie("h1", "control"), fabric.ACLCookie("h9", "other"))
	ep := fabric.Endpoint{Bridge: "br0"}
	names := []string{"eth1", "lag1", "lag2", name}
	cmds := readCommands(ep, names)
	if len(cmds) != 4 || !strings.HasSuffix(cmds[3], "dump-flows br0 cookie=0x6d77000000000000/0xffff000000000000") {
		t.Fatalf("readCommands = %q; want the flows of metalwire's cookies read last", cmds)
	}
	if got := readCommands(ep, names[:3]); len(got) != 3 {
		t.Fatalf("readCommands without a list asked = %q; want no flows read", got)
	}
	st, err := parseState(ep, names, []string{list, ifaces, "eth1\nlag1\nlag2\n", flows})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Ports["eth1"].Down || !st.LAGs["lag1"].Port.Down || st.LAGs["lag2"].Port.Down {
		t.Errorf("state: eth1 %+v, lag1 %+v, lag2 %+v; want eth1 and lag1 down, lag2 (one member up) up", st.Ports["eth1"], st.LAGs["lag1"], st.LAGs["lag2"])
	}
	a, ok := st.ACLs[name]
	if !ok || len(st.ACLs) != 1 || a.Cookie != fabric.ACLCookie("h1", "control") || len(a.Flows) != 1 || a.Flows[0].InPort != "eth1" {
		t.Errorf("ACLs = %+v; want %s alone with its one flow", st.ACLs, name)
	}
}
