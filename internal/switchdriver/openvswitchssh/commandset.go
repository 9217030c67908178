package openvswitchssh

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
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
		ACLs:      true,
		PortState: true,
		Errors: []*regexp.Regexp{
			regexp.MustCompile(`^ovs-vsctl: `),
			regexp.MustCompile(`^ovs-ofctl: `),
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
// then the lists' ovs-ofctl bundle and the ports' state (see openflow.go). VLANs exist on Open
// vSwitch only as port tags: ensure-vlan and remove-vlan render nothing.
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
		case fabric.OpEnsureACL, fabric.OpRemoveACL:
			// OpenFlow's: after the database's changes, below.
		default:
			return nil, fmt.Errorf("change %d (%s): %w (networkOS %s has no %s yet)", i, c, fabric.ErrUnsupported, NetworkOS, c.Op)
		}
	}
	var lines []string
	if len(cmds) > 0 {
		line := vsctl
		for _, cmd := range cmds {
			line += " --"
			for _, arg := range cmd {
				line += " " + quote(arg)
			}
		}
		lines = append(lines, line)
	}
	// ovs-vsctl returns once ovs-vswitchd has applied its changes, so the flows and port-mods
	// below find the ports (and bonds' members) as it left them.
	acls, err := renderACLs(ep, batch)
	if err != nil {
		return nil, err
	}
	if acls != "" {
		lines = append(lines, acls)
	}
	states, err := renderPortState(ep, have, batch)
	if err != nil {
		return nil, err
	}
	return append(lines, states...), nil
}

// readCommands list the Port and Interface tables and the bridge's ports, and the bridge's
// metalwire flows when a list is asked about.
func readCommands(ep fabric.Endpoint, names []string) []string {
	list := vsctl + " --format=json --columns=name,tag,trunks,vlan_mode,interfaces,bond_mode,lacp,other_config list Port"
	ifaces := vsctl + " --format=json --columns=name,mtu_request,_uuid,admin_state list Interface"
	if ep.Bridge == "" {
		return []string{list, ifaces}
	}
	cmds := []string{list, ifaces, vsctl + " list-ports " + quote(ep.Bridge)}
	if asksACLs(names) {
		cmds = append(cmds, dumpFlows(ep.Bridge))
	}
	return cmds
}

// parseState reads `ovs-vsctl --format=json list Port` (and list-ports of the bridge).
func parseState(ep fabric.Endpoint, names []string, outs []string) (fabric.State, error) {
	var table struct {
		Data [][]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(outs[0]), &table); err != nil {
		return fabric.State{}, fmt.Errorf("ovs-vsctl list Port: %w", err)
	}
	ifs, err := parseInterfaces(outs[1])
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
			if l, bond := bondOf(p, row[4:], ifs.names); bond {
				// A bond is down when every member is: one member up still carries traffic.
				l.Port.Down = len(l.Members) > 0 && !slices.ContainsFunc(l.Members, func(m string) bool { return !ifs.down[m] })
				lags[name] = l
				continue
			}
		}
		p.MTU = ifs.mtus[name] // a port's interface of the same name
		p.Down = ifs.down[name]
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
	if asksACLs(names) {
		if ep.Bridge == "" || len(outs) < 4 {
			return fabric.State{}, fmt.Errorf("access lists are read from one bridge's flows: set the switch's bridge in the NetworkDevice")
		}
		if st.ACLs, err = parseACLs(outs[3], names); err != nil {
			return fabric.State{}, err
		}
	}
	return st, nil
}

// interfaces is what `ovs-vsctl --format=json --columns=name,mtu_request,_uuid,admin_state list
// Interface` says: each interface's mtu_request (those that have one), name by UUID, and
// whether it is administratively down.
type interfaces struct {
	mtus  map[string]int
	names map[string]string
	down  map[string]bool
}

func parseInterfaces(out string) (interfaces, error) {
	var table struct {
		Data [][]json.RawMessage `json:"data"`
	}
	ifs := interfaces{mtus: map[string]int{}, names: map[string]string{}, down: map[string]bool{}}
	if err := json.Unmarshal([]byte(out), &table); err != nil {
		return ifs, fmt.Errorf("ovs-vsctl list Interface: %w", err)
	}
	for _, row := range table.Data {
		if len(row) < 2 || len(row) > 4 {
			return ifs, fmt.Errorf("ovs-vsctl list Interface: a row of %d columns, want 4", len(row))
		}
		var name string
		if err := json.Unmarshal(row[0], &name); err != nil {
			return ifs, fmt.Errorf("ovs-vsctl list Interface: interface name: %w", err)
		}
		if v := ints(row[1]); len(v) > 0 {
			ifs.mtus[name] = v[0]
		}
		if len(row) >= 3 {
			for _, u := range uuids(row[2]) {
				ifs.names[u] = name
			}
		}
		if len(row) == 4 {
			var state string
			_ = json.Unmarshal(row[3], &state) // ["set",[]] before ovs-vswitchd reports
			ifs.down[name] = state == "down"
		}
	}
	return ifs, nil
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
