package openvswitchssh

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/metalwire/metalwire/internal/switchdriver/openvswitch"
	"github.com/metalwire/metalwire/internal/switchdriver/sshcli"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// NetworkOS is the NetworkDevice networkOS value this driver serves.
const NetworkOS = "openvswitch-ssh"

// vsctl is the command every line starts with. --timeout bounds a switch whose ovs-vswitchd
// does not confirm the change.
const vsctl = "ovs-vsctl --timeout=30"

// New returns the driver.
func New() sshcli.Driver { return sshcli.Driver{Set: CommandSet()} }

// CommandSet describes ovs-vsctl over an SSH exec channel.
func CommandSet() sshcli.CommandSet {
	return sshcli.CommandSet{
		NetworkOS: NetworkOS,
		Mode:      sshcli.ModeExec,
		PortMTU:   true,
		Errors: []*regexp.Regexp{
			regexp.MustCompile(`^ovs-vsctl: `),
			regexp.MustCompile(`command not found`),
			regexp.MustCompile(`Permission denied`),
		},
		Render:         render,
		ReadCommands:   readCommands,
		ParseState:     parseState,
		VersionCommand: "ovs-vsctl --version",
		ParseVersion: func(out string) string {
			// "ovs-vsctl (Open vSwitch) 3.1.0"
			first, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
			if f := strings.Fields(first); len(f) > 0 {
				return "Open vSwitch " + f[len(f)-1]
			}
			return first
		},
	}
}

// render joins the changes into one ovs-vsctl invocation:
//
//	access:  set port P tag=N vlan_mode=access -- clear port P trunks
//	trunk:   set port P vlan_mode=trunk trunks=A,B -- clear port P tag
//	         (with a native VLAN: set port P tag=N vlan_mode=native-untagged trunks=A,B)
//	reset:   set port P tag=IDLE -- clear port P trunks vlan_mode
//	         (idle VLAN 0: clear port P tag trunks vlan_mode)
//	mtu:     set interface P mtu_request=N, or clear interface P mtu_request (only when the
//	         port's MTU, as read back in have, differs)
//
// VLANs exist on Open vSwitch only as port tags: ensure-vlan and remove-vlan render nothing.
func render(ep fabric.Endpoint, have fabric.State, batch fabric.Batch) ([]string, error) {
	for i, c := range batch {
		if (c.Op == fabric.OpEnsureLAG || c.Op == fabric.OpRemoveLAG) && c.LAG.MLAG != nil {
			return nil, fmt.Errorf("change %d (%s): %w (Open vSwitch has no multi-chassis LAG: bond cards on one switch)", i, c, fabric.ErrUnsupported)
		}
	}
	var cmds [][]string
	for i, c := range batch {
		p := c.Port
		switch c.Op {
		case fabric.OpAccessPort, fabric.OpTrunkPort, fabric.OpResetPort:
			mtu := p.MTU
			if c.Op == fabric.OpResetPort {
				mtu = 0
			}
			if cur, ok := have.Ports[p.Name]; ok && cur.MTU != mtu {
				if mtu > 0 {
					cmds = append(cmds, []string{"set", "interface", p.Name, "mtu_request=" + strconv.Itoa(mtu)})
				} else {
					cmds = append(cmds, []string{"clear", "interface", p.Name, "mtu_request"})
				}
			}
		}
		switch c.Op {
		case fabric.OpEnsureVLAN, fabric.OpRemoveVLAN:
		case fabric.OpAccessPort:
			cmds = append(cmds,
				[]string{"set", "port", p.Name, "tag=" + strconv.Itoa(p.VLAN), "vlan_mode=access"},
				[]string{"clear", "port", p.Name, "trunks"})
		case fabric.OpTrunkPort:
			trunks := "trunks=" + joinInts(p.Trunk)
			if p.VLAN > 0 {
				cmds = append(cmds, []string{"set", "port", p.Name, "tag=" + strconv.Itoa(p.VLAN), "vlan_mode=native-untagged", trunks})
			} else {
				cmds = append(cmds,
					[]string{"set", "port", p.Name, "vlan_mode=trunk", trunks},
					[]string{"clear", "port", p.Name, "tag"})
			}
		case fabric.OpResetPort:
			if p.VLAN > 0 {
				cmds = append(cmds,
					[]string{"set", "port", p.Name, "tag=" + strconv.Itoa(p.VLAN)},
					[]string{"clear", "port", p.Name, "trunks", "vlan_mode"})
			} else {
				cmds = append(cmds, []string{"clear", "port", p.Name, "tag", "trunks", "vlan_mode"})
			}
		case fabric.OpEnsureLAG, fabric.OpRemoveLAG:
			lagCmds, err := renderLAG(ep, i, c)
			if err != nil {
				return nil, err
			}
			cmds = append(cmds, lagCmds...)
		default:
			return nil, fmt.Errorf("change %d (%s): %w (networkOS %s has no %s yet)", i, c, fabric.ErrUnsupported, NetworkOS, c.Op)
		}
	}
	if len(cmds) == 0 {
		return nil, nil
	}
	line := vsctl
	for _, cmd := range cmds {
		line += " --"
		for _, arg := range cmd {
			line += " " + quote(arg)
		}
	}
	return []string{line}, nil
}

func readCommands(ep fabric.Endpoint, _ []string) []string {
	list := vsctl + " --format=json --columns=name,tag,trunks,vlan_mode,interfaces,bond_mode,lacp,other_config list Port"
	mtus := vsctl + " --format=json --columns=name,mtu_request,_uuid list Interface"
	if ep.Bridge == "" {
		return []string{list, mtus}
	}
	return []string{list, mtus, vsctl + " list-ports " + quote(ep.Bridge)}
}

// parseState reads `ovs-vsctl --format=json list Port` (and list-ports of the bridge).
func parseState(ep fabric.Endpoint, names []string, outs []string) (fabric.State, error) {
	var table struct {
		Data [][]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(outs[0]), &table); err != nil {
		return fabric.State{}, fmt.Errorf("ovs-vsctl list Port: %w", err)
	}
	mtus, ifaceNames, err := parseInterfaces(outs[1])
	if err != nil {
		return fabric.State{}, err
	}
	var onBridge map[string]bool
	if ep.Bridge != "" && len(outs) > 2 {
		onBridge = map[string]bool{}
		for _, n := range strings.Fields(outs[2]) {
			onBridge[n] = true
		}
	}
	ports := map[string]fabric.Port{}
	lags := map[string]fabric.LAG{}
	all := []fabric.Port{}
	for _, row := range table.Data {
		if len(row) != 4 && len(row) != 8 {
			return fabric.State{}, fmt.Errorf("ovs-vsctl list Port: a row of %d columns, want 8", len(row))
		}
		var name, mode string
		if err := json.Unmarshal(row[0], &name); err != nil {
			return fabric.State{}, fmt.Errorf("ovs-vsctl list Port: port name: %w", err)
		}
		if onBridge != nil && !onBridge[name] {
			continue
		}
		_ = json.Unmarshal(row[3], &mode) // ["set",[]] when empty
		tags := ints(row[1])
		tag := 0
		if len(tags) > 0 {
			tag = tags[0]
		}
		p := openvswitch.PortFromColumns(name, tag, ints(row[2]), mode)
		all = append(all, p)
		if len(row) == 8 {
			if l, bond := bondOf(p, row[4:], ifaceNames); bond {
				lags[name] = l
				continue
			}
		}
		p.MTU = mtus[name] // a port's interface of the same name
		ports[name] = p
	}
	st := fabric.State{VLANs: openvswitch.VLANsCarried(all), Ports: map[string]fabric.Port{}}
	for _, n := range names {
		if p, ok := ports[n]; ok {
			st.Ports[n] = p
		}
		if l, ok := lags[n]; ok {
			if st.LAGs == nil {
				st.LAGs = map[string]fabric.LAG{}
			}
			st.LAGs[n] = l
		}
	}
	return st, nil
}

// parseInterfaces reads `ovs-vsctl --format=json --columns=name,mtu_request,_uuid list
// Interface`: the mtu_request of each interface that has one, and each interface's name by UUID.
func parseInterfaces(out string) (map[string]int, map[string]string, error) {
	var table struct {
		Data [][]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &table); err != nil {
		return nil, nil, fmt.Errorf("ovs-vsctl list Interface: %w", err)
	}
	mtus, names := map[string]int{}, map[string]string{}
	for _, row := range table.Data {
		if len(row) != 2 && len(row) != 3 {
			return nil, nil, fmt.Errorf("ovs-vsctl list Interface: a row of %d columns, want 3", len(row))
		}
		var name string
		if err := json.Unmarshal(row[0], &name); err != nil {
			return nil, nil, fmt.Errorf("ovs-vsctl list Interface: interface name: %w", err)
		}
		if v := ints(row[1]); len(v) > 0 {
			mtus[name] = v[0]
		}
		if len(row) == 3 {
			for _, u := range uuids(row[2]) {
				names[u] = name
			}
		}
	}
	return mtus, names, nil
}

// ints reads an OVSDB integer or integer set as ovs-vsctl prints it in JSON: 5 or ["set",[1,2]].
func ints(raw json.RawMessage) []int {
	var n int
	if json.Unmarshal(raw, &n) == nil {
		return []int{n}
	}
	var set []json.RawMessage
	if json.Unmarshal(raw, &set) != nil || len(set) != 2 {
		return nil
	}
	var vals []int
	_ = json.Unmarshal(set[1], &vals)
	return vals
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

var plainWord = regexp.MustCompile(`^[A-Za-z0-9=,._/:@-]+$`)

// quote makes an argument one shell word, leaving plain words as they are so the command reads
// as a person would type it. Names are already limited to safe characters by sshcli.
func quote(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
