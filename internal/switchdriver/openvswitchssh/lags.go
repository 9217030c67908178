package openvswitchssh

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// renderLAG writes a bond change as ovs-vsctl commands of the batch's one invocation:
//
//	ensure-lag: --if-exists --with-iface del-port BR M (each member's port: its own, or an older
//	            bond), --if-exists del-port BR L, then
//	            add-bond BR L M1 M2 lacp=active bond_mode=balance-tcp other_config:lacp-time=slow
//	            tag=N vlan_mode=access (static: lacp=off bond_mode=active-backup; a trunk:
//	            vlan_mode=trunk trunks=A,B)
//	remove-lag: --if-exists del-port BR L, then add-port BR M tag=IDLE for each member
func renderLAG(ep fabric.Endpoint, i int, c fabric.Change) ([][]string, error) {
	if ep.Bridge == "" {
		return nil, fmt.Errorf("change %d (%s): a bond is made on a bridge: set the switch's bridge in the NetworkDevice", i, c)
	}
	l := c.LAG
	br := ep.Bridge
	if c.Op == fabric.OpRemoveLAG {
		cmds := [][]string{{"--if-exists", "del-port", br, l.Name}}
		for _, m := range l.Members {
			add := []string{"add-port", br, m}
			if l.Port.VLAN > 0 {
				add = append(add, "tag="+strconv.Itoa(l.Port.VLAN))
			}
			cmds = append(cmds, add)
		}
		return cmds, nil
	}
	if len(l.Members) < 2 {
		return nil, fmt.Errorf("change %d (%s): a bond needs at least two members", i, c)
	}
	var cmds [][]string
	for _, m := range l.Members {
		cmds = append(cmds, []string{"--if-exists", "--with-iface", "del-port", br, m})
	}
	cmds = append(cmds, []string{"--if-exists", "del-port", br, l.Name})
	add := append([]string{"add-bond", br, l.Name}, l.Members...)
	rate := "slow"
	if l.FastRate {
		rate = "fast"
	}
	if l.LACP {
		add = append(add, "lacp=active", "bond_mode=balance-tcp", "other_config:lacp-time="+rate)
	} else {
		add = append(add, "lacp=off", "bond_mode=active-backup", "other_config:lacp-time=slow")
	}
	p := l.Port
	switch {
	case p.Mode == fabric.ModeTrunk && p.VLAN > 0:
		add = append(add, "tag="+strconv.Itoa(p.VLAN), "vlan_mode=native-untagged", "trunks="+joinInts(p.Trunk))
	case p.Mode == fabric.ModeTrunk:
		add = append(add, "vlan_mode=trunk", "trunks="+joinInts(p.Trunk))
	default:
		add = append(add, "tag="+strconv.Itoa(p.VLAN), "vlan_mode=access")
	}
	return append(cmds, add), nil
}

// bondOf reads a Port row's bond columns (interfaces, bond_mode, lacp, other_config) as a LAG
// when the port is a bond; p is the row's VLAN configuration.
func bondOf(p fabric.Port, cols []json.RawMessage, ifaceNames map[string]string) (fabric.LAG, bool) {
	members := uuids(cols[0])
	var bondMode, lacp string
	_ = json.Unmarshal(cols[1], &bondMode) // ["set",[]] when empty
	_ = json.Unmarshal(cols[2], &lacp)
	if len(members) < 2 && bondMode == "" && (lacp == "" || lacp == "off") {
		return fabric.LAG{}, false
	}
	l := fabric.LAG{Name: p.Name, Port: p, LACP: lacp != "" && lacp != "off"}
	for _, u := range members {
		l.Members = append(l.Members, ifaceNames[u])
	}
	l.FastRate = l.LACP && stringMap(cols[3])["lacp-time"] == "fast"
	return l, true
}

// uuids reads a UUID or UUID set as ovs-vsctl prints it in JSON: ["uuid","..."] or
// ["set",[["uuid","..."],...]].
func uuids(raw json.RawMessage) []string {
	var pair []json.RawMessage
	if json.Unmarshal(raw, &pair) != nil || len(pair) != 2 {
		return nil
	}
	var kind string
	_ = json.Unmarshal(pair[0], &kind)
	switch kind {
	case "uuid":
		var u string
		_ = json.Unmarshal(pair[1], &u)
		return []string{u}
	case "set":
		var items []json.RawMessage
		_ = json.Unmarshal(pair[1], &items)
		var out []string
		for _, it := range items {
			out = append(out, uuids(it)...)
		}
		return out
	}
	return nil
}

// stringMap reads a string map as ovs-vsctl prints it in JSON: ["map",[["k","v"],...]].
func stringMap(raw json.RawMessage) map[string]string {
	var pair []json.RawMessage
	if json.Unmarshal(raw, &pair) != nil || len(pair) != 2 {
		return nil
	}
	var kv [][2]string
	if json.Unmarshal(pair[1], &kv) != nil {
		return nil
	}
	out := make(map[string]string, len(kv))
	for _, e := range kv {
		out[e[0]] = e[1]
	}
	return out
}
