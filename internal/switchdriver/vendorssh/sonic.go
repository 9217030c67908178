package vendorssh

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/metalwire/metalwire/internal/switchdriver/sshcli"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// SONiC is SONiC's click CLI over SSH exec channels: "sudo config vlan ..." to change,
// "sudo config save -y" to save, sonic-cfggen's JSON view of CONFIG_DB to read back. A port is
// in a VLAN by membership, untagged (its access or native VLAN) or tagged (a trunk's VLANs).
func SONiC() sshcli.CommandSet {
	return sshcli.CommandSet{
		NetworkOS: "sonic",
		PortState: true,
		Mode:      sshcli.ModeExec,
		Save:      []string{"sudo config save -y"},
		Errors: []*regexp.Regexp{
			regexp.MustCompile(`^Error: `),
			regexp.MustCompile(`command not found`),
			regexp.MustCompile(`Permission denied`),
		},
		Render: renderSONiC,
		ReadCommands: func(fabric.Endpoint, []string) []string {
			return []string{"sonic-cfggen -d --var-json VLAN", "sonic-cfggen -d --var-json VLAN_MEMBER", "sonic-cfggen -d --var-json PORT"}
		},
		ParseState:     parseSONiC,
		VersionCommand: "show version",
		ParseVersion: func(out string) string {
			for _, l := range strings.Split(out, "\n") {
				if v, ok := strings.CutPrefix(strings.TrimSpace(l), "SONiC Software Version:"); ok {
					return strings.TrimSpace(v)
				}
			}
			return ""
		},
	}
}

// renderSONiC changes memberships: those the switch shows (have) and the change does not keep
// go first, then the missing ones are added.
//
//	ensure-vlan: sudo config vlan add N          remove-vlan: sudo config vlan del N
//	access:      sudo config vlan member del V P (each other membership) /
//	             sudo config vlan member add -u N P
//	trunk:       sudo config vlan member del V P (each unwanted) /
//	             sudo config vlan member add -u NATIVE P / sudo config vlan member add V P (each VLAN)
//	reset:       access in the idle VLAN (sudo config vlan add IDLE first if the switch lacks it)
//
// A port whose administrative state (PORT's admin_status) is not the one asked is then shut or
// started: sudo config interface shutdown P (portStatus down) or sudo config interface startup P
// (up; a reset port is up).
func renderSONiC(_ fabric.Endpoint, have fabric.State, batch fabric.Batch) ([]string, error) {
	var lines []string
	vlans := map[int]bool{}
	for _, v := range have.VLANs {
		vlans[v.ID] = true
	}
	member := func(port string, untagged, tagged []int) {
		cur := have.Ports[port]
		curUntagged, curTagged := 0, []int(nil)
		switch cur.Mode {
		case fabric.ModeAccess:
			curUntagged = cur.VLAN
		case fabric.ModeTrunk:
			curUntagged, curTagged = cur.VLAN, cur.Trunk
		}
		if curUntagged != 0 && !slices.Contains(untagged, curUntagged) {
			lines = append(lines, fmt.Sprintf("sudo config vlan member del %d %s", curUntagged, port))
		}
		for _, v := range curTagged {
			if !slices.Contains(tagged, v) {
				lines = append(lines, fmt.Sprintf("sudo config vlan member del %d %s", v, port))
			}
		}
		for _, v := range untagged {
			if v != curUntagged {
				lines = append(lines, fmt.Sprintf("sudo config vlan member add -u %d %s", v, port))
			}
		}
		for _, v := range tagged {
			if !slices.Contains(curTagged, v) {
				lines = append(lines, fmt.Sprintf("sudo config vlan member add %d %s", v, port))
			}
		}
	}
	// state shuts or starts a port whose administrative state (as read back) is not the one asked.
	state := func(port string, down bool) {
		switch cur, ok := have.Ports[port]; {
		case down && (!ok || !cur.Down):
			lines = append(lines, "sudo config interface shutdown "+port)
		case !down && (!ok || cur.Down):
			lines = append(lines, "sudo config interface startup "+port)
		}
	}
	for i, c := range batch {
		p := c.Port
		switch c.Op {
		case fabric.OpEnsureVLAN:
			lines = append(lines, fmt.Sprintf("sudo config vlan add %d", c.VLAN.ID))
			vlans[c.VLAN.ID] = true
		case fabric.OpRemoveVLAN:
			lines = append(lines, fmt.Sprintf("sudo config vlan del %d", c.VLAN.ID))
			delete(vlans, c.VLAN.ID)
		case fabric.OpAccessPort:
			member(p.Name, []int{p.VLAN}, nil)
			state(p.Name, p.Down)
		case fabric.OpTrunkPort:
			var untagged []int
			if p.VLAN > 0 {
				untagged = []int{p.VLAN}
			}
			tagged := slices.DeleteFunc(slices.Clone(p.Trunk), func(v int) bool { return v == p.VLAN })
			member(p.Name, untagged, tagged)
			state(p.Name, p.Down)
		case fabric.OpResetPort:
			idle, err := idleOf("sonic", i, c)
			if err != nil {
				return nil, err
			}
			if !vlans[idle] {
				lines = append(lines, fmt.Sprintf("sudo config vlan add %d", idle))
				vlans[idle] = true
			}
			member(p.Name, []int{idle}, nil)
			state(p.Name, false)
		default:
			return nil, unsupported("sonic", i, c)
		}
	}
	return lines, nil
}

// parseSONiC reads sonic-cfggen's VLAN, VLAN_MEMBER and PORT tables.
func parseSONiC(_ fabric.Endpoint, names []string, outs []string) (fabric.State, error) {
	var vlanTable map[string]struct {
		ID flexInt `json:"vlanid"`
	}
	if err := json.Unmarshal([]byte(outs[0]), &vlanTable); err != nil {
		return fabric.State{}, fmt.Errorf("sonic-cfggen VLAN: %w", err)
	}
	ids := make([]int, 0, len(vlanTable))
	for _, v := range vlanTable {
		ids = append(ids, int(v.ID))
	}
	var members map[string]struct {
		Mode string `json:"tagging_mode"`
	}
	if err := json.Unmarshal([]byte(outs[1]), &members); err != nil {
		return fabric.State{}, fmt.Errorf("sonic-cfggen VLAN_MEMBER: %w", err)
	}
	var portTable map[string]struct {
		AdminStatus string `json:"admin_status"`
	}
	if err := json.Unmarshal([]byte(outs[2]), &portTable); err != nil {
		return fabric.State{}, fmt.Errorf("sonic-cfggen PORT: %w", err)
	}
	untagged := map[string]int{}
	tagged := map[string][]int{}
	for key, m := range members {
		vlan, port, ok := strings.Cut(key, "|")
		id, err := strconv.Atoi(strings.TrimPrefix(vlan, "Vlan"))
		if !ok || err != nil {
			return fabric.State{}, fmt.Errorf("sonic-cfggen VLAN_MEMBER: key %q is not Vlan<id>|<port>", key)
		}
		if m.Mode == "untagged" {
			untagged[port] = id
		} else {
			tagged[port] = append(tagged[port], id)
		}
	}
	all := map[string]fabric.Port{}
	for name, row := range portTable {
		t := tagged[name]
		slices.Sort(t)
		switch {
		case len(t) > 0:
			all[name] = fabric.Port{Name: name, Mode: fabric.ModeTrunk, VLAN: untagged[name], Trunk: t}
		case untagged[name] != 0:
			all[name] = fabric.Port{Name: name, Mode: fabric.ModeAccess, VLAN: untagged[name]}
		default:
			all[name] = fabric.Port{Name: name}
		}
		// SONiC's ports are down unless admin_status says up (a row without it is down).
		p := all[name]
		p.Down = row.AdminStatus != "up"
		all[name] = p
	}
	return fabric.State{VLANs: vlansOf(ids), Ports: wantPorts(all, names)}, nil
}
