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

// The industry-standard CLI of EOS and NX-OS: "vlan N", "interface X" and "switchport" lines in
// configuration mode, "| json" on show commands.

// EOS is Arista EOS: scrapligo's arista_eos platform, "write memory" to save.
func EOS() sshcli.CommandSet {
	return sshcli.CommandSet{
		NetworkOS: "eos",
		PortState: true,
		ACLs:      true,
		Mode:      sshcli.ModePlatform,
		Platform:  "arista_eos",
		Save:      []string{"write memory"},
		Errors:    []*regexp.Regexp{regexp.MustCompile(`^% `)},
		Render: func(ep fabric.Endpoint, have fabric.State, b fabric.Batch) ([]string, error) {
			return renderIOS("eos", false, b, func(i int, c fabric.Change) ([]string, error) {
				if c.Op == fabric.OpEnsureACL || c.Op == fabric.OpRemoveACL {
					return eosLAG.renderACL(have, i, c)
				}
				return eosLAG.renderLAG(ep, have, i, c)
			})
		},
		ReadCommands: func(fabric.Endpoint, []string) []string {
			return []string{"show vlan | json", "show interfaces switchport | json", "show running-config | json"}
		},
		ParseState:     parseEOS,
		VersionCommand: "show version | json",
		ParseVersion:   jsonVersion("version", "EOS "),
	}
}

// NXOS is Cisco NX-OS: scrapligo's cisco_nxos platform, "copy running-config startup-config".
func NXOS() sshcli.CommandSet {
	return sshcli.CommandSet{
		NetworkOS: "nxos",
		PortState: true,
		ACLs:      true,
		Mode:      sshcli.ModePlatform,
		Platform:  "cisco_nxos",
		Save:      []string{"copy running-config startup-config"},
		Errors:    []*regexp.Regexp{regexp.MustCompile(`^% `), regexp.MustCompile(`^ERROR:`)},
		Render: func(ep fabric.Endpoint, have fabric.State, b fabric.Batch) ([]string, error) {
			return renderIOS("nxos", true, b, func(i int, c fabric.Change) ([]string, error) {
				if c.Op == fabric.OpEnsureACL || c.Op == fabric.OpRemoveACL {
					return renderNXOSACL(have, i, c)
				}
				return nxosLAG.renderLAG(ep, have, i, c)
			})
		},
		ReadCommands: func(fabric.Endpoint, []string) []string {
			return []string{"show vlan brief | json", "show interface switchport | json", "show running-config interface",
				"show running-config aclmgr"}
		},
		ParseState:     parseNXOS,
		VersionCommand: "show version | json",
		ParseVersion:   jsonVersion("nxos_ver_str", "NX-OS "),
	}
}

// renderIOS types a batch in configuration mode. l2 adds "switchport" first (NX-OS ports may
// be routed ports until told otherwise).
//
//	ensure-vlan: vlan N / exit              remove-vlan: no vlan N
//	access:      interface P / switchport mode access / switchport access vlan N / exit
//	trunk:       interface P / switchport mode trunk / switchport trunk allowed vlan L /
//	             switchport trunk native vlan N (or no switchport trunk native vlan) / exit
//	reset:       interface P / switchport mode access / switchport access vlan IDLE /
//	             no switchport trunk allowed vlan / no switchport trunk native vlan / exit
//
// Every port change ends with the port's state: "shutdown" (portStatus down) or "no shutdown"
// (a reset port is up).
//
// Both CLIs take ranges, so a batch configures together what one line can name: the VLANs of a
// run of ensure-vlan (or remove-vlan) changes, as ranges of consecutive IDs ("vlan 1001-1003"),
// and the ports of a run of port changes that get the same lines, as ranges of consecutive ports
// ("interface Ethernet1-48", NX-OS "interface Ethernet1/1-48"). Runs keep the batch's order
// (VLANs ensured before the ports that use them, removed after). A range never holds a comma:
// the prompt EOS then shows ("config-if-Et1,3") is not one scrapligo's arista_eos platform
// recognizes.
//
// lag renders a bond change (ensure-lag, remove-lag) and an access list change (ensure-acl,
// remove-acl) as lines of their own, sent where the change comes in the batch, or refuses it
// (NX-OS's access lists: its port lists filter inbound only); nil when the OS renders neither
// (refused: ErrUnsupported).
func renderIOS(os string, l2 bool, batch fabric.Batch, lag func(i int, c fabric.Change) ([]string, error)) ([]string, error) {
	items := make([]batchItem, 0, len(batch))
	for i, c := range batch {
		p := c.Port
		it := batchItem{op: c.Op, vlan: c.VLAN.ID, port: p.Name}
		switch c.Op {
		case fabric.OpEnsureVLAN, fabric.OpRemoveVLAN:
		case fabric.OpEnsureLAG, fabric.OpRemoveLAG, fabric.OpEnsureACL, fabric.OpRemoveACL:
			if lag == nil {
				return nil, unsupported(os, i, c)
			}
			lines, err := lag(i, c)
			if err != nil {
				return nil, err
			}
			items = append(items, batchItem{op: c.Op, lines: lines})
			continue
		case fabric.OpAccessPort:
			it.body = []string{"switchport mode access", fmt.Sprintf("switchport access vlan %d", p.VLAN)}
		case fabric.OpTrunkPort:
			native := "no switchport trunk native vlan"
			if p.VLAN > 0 {
				native = fmt.Sprintf("switchport trunk native vlan %d", p.VLAN)
			}
			it.body = []string{"switchport mode trunk", "switchport trunk allowed vlan " + joinInts(trunkVLANs(p)), native}
		case fabric.OpResetPort:
			idle, err := idleOf(os, i, c)
			if err != nil {
				return nil, err
			}
			it.body = []string{"switchport mode access", fmt.Sprintf("switchport access vlan %d", idle),
				"no switchport trunk allowed vlan", "no switchport trunk native vlan"}
		default:
			return nil, unsupported(os, i, c)
		}
		if l2 && it.body != nil {
			it.body = append([]string{"switchport"}, it.body...)
		}
		if it.body != nil {
			it.body = append(it.body, shutdownLine(c.Op != fabric.OpResetPort && p.Down))
		}
		items = append(items, it)
	}
	var lines []string
	for _, run := range batchRuns(items) {
		switch {
		case run.lines != nil:
			lines = append(lines, run.lines...)
		case run.groups == nil:
			for _, r := range idRanges(run.vlans) {
				if run.vlanOp == fabric.OpEnsureVLAN {
					lines = append(lines, "vlan "+r, "exit")
				} else {
					lines = append(lines, "no vlan "+r)
				}
			}
		default:
			for _, g := range run.groups {
				for _, name := range portRanges(g.ports) {
					lines = append(append(append(lines, "interface "+name), g.body...), "exit")
				}
			}
		}
	}
	return lines, nil
}

// idRanges writes ascending IDs as ranges of consecutive ones: [1001 1002 1003 1005] is
// "1001-1003", "1005".
func idRanges(ids []int) []string {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	var out []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if j > i {
			out = append(out, fmt.Sprintf("%d-%d", ids[i], ids[j]))
		} else {
			out = append(out, strconv.Itoa(ids[i]))
		}
		i = j + 1
	}
	return out
}

// portRanges writes port names as EOS and NX-OS ranges of consecutive ports: Ethernet1, Ethernet2,
// Ethernet3, Ethernet7 and Ethernet49/1, Ethernet49/2 are "Ethernet1-3", "Ethernet7",
// "Ethernet49/1-2". A name that does not end in a number (or ends in one with a leading zero)
// stays as it is.
func portRanges(names []string) []string {
	type port struct {
		prefix string
		n      int
		name   string
	}
	ports := make([]port, 0, len(names))
	for _, name := range names {
		i := len(name)
		for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
			i--
		}
		n, err := strconv.Atoi(name[i:])
		if err != nil || i == 0 || strconv.Itoa(n) != name[i:] {
			n = -1
		}
		ports = append(ports, port{prefix: name[:i], n: n, name: name})
	}
	slices.SortStableFunc(ports, func(a, b port) int {
		if c := strings.Compare(a.prefix, b.prefix); c != 0 {
			return c
		}
		return a.n - b.n
	})
	var out []string
	for i := 0; i < len(ports); {
		j := i
		for ports[i].n >= 0 && j+1 < len(ports) && ports[j+1].prefix == ports[i].prefix && ports[j+1].n == ports[j].n+1 {
			j++
		}
		if j > i {
			out = append(out, fmt.Sprintf("%s%d-%d", ports[i].prefix, ports[i].n, ports[j].n))
		} else {
			out = append(out, ports[i].name)
		}
		i = j + 1
	}
	return out
}

// parseEOS reads "show vlan | json" and "show interfaces switchport | json".
func parseEOS(_ fabric.Endpoint, names []string, outs []string) (fabric.State, error) {
	var vl struct {
		VLANs map[string]json.RawMessage `json:"vlans"`
	}
	if err := json.Unmarshal([]byte(outs[0]), &vl); err != nil {
		return fabric.State{}, fmt.Errorf("show vlan | json: %w", err)
	}
	var ids []int
	for k := range vl.VLANs {
		id, err := strconv.Atoi(k)
		if err != nil {
			return fabric.State{}, fmt.Errorf("show vlan | json: VLAN %q: %w", k, err)
		}
		ids = append(ids, id)
	}
	var sp struct {
		Switchports map[string]struct {
			Info struct {
				Mode    string  `json:"mode"`
				Access  flexInt `json:"accessVlanId"`
				Native  flexInt `json:"trunkingNativeVlanId"`
				Allowed string  `json:"trunkAllowedVlans"`
			} `json:"switchportInfo"`
		} `json:"switchports"`
	}
	if err := json.Unmarshal([]byte(outs[1]), &sp); err != nil {
		return fabric.State{}, fmt.Errorf("show interfaces switchport | json: %w", err)
	}
	all := map[string]fabric.Port{}
	for name, s := range sp.Switchports {
		p, err := iosPort(name, s.Info.Mode, int(s.Info.Access), int(s.Info.Native), s.Info.Allowed)
		if err != nil {
			return fabric.State{}, fmt.Errorf("show interfaces switchport | json: %s: %w", name, err)
		}
		all[name] = p
	}
	secs, top, err := eosSections(outs[2])
	if err != nil {
		return fabric.State{}, fmt.Errorf("show running-config | json: %w", err)
	}
	readShutdown(all, secs)
	lags, members := eosLAG.parseLAGs(secs, all, names)
	for m := range members {
		delete(all, m)
	}
	acls := parseIOSACLs(names, eosACLLists(top), secs, lags)
	return fabric.State{VLANs: vlansOf(ids), Ports: wantPorts(all, names), LAGs: lags, ACLs: acls}, nil
}

// parseNXOS reads "show vlan brief | json", "show interface switchport | json", the
// interfaces' running configuration and the access lists' ("show running-config aclmgr"). NX-OS
// prints a table's only row as an object and several as a list.
func parseNXOS(_ fabric.Endpoint, names []string, outs []string) (fabric.State, error) {
	var vl struct {
		Table struct {
			Rows json.RawMessage `json:"ROW_vlanbriefxbrief"`
		} `json:"TABLE_vlanbriefxbrief"`
	}
	if err := json.Unmarshal([]byte(outs[0]), &vl); err != nil {
		return fabric.State{}, fmt.Errorf("show vlan brief | json: %w", err)
	}
	var vrows []struct {
		ID flexInt `json:"vlanshowbr-vlanid"`
	}
	if err := nxosRows(vl.Table.Rows, &vrows); err != nil {
		return fabric.State{}, fmt.Errorf("show vlan brief | json: %w", err)
	}
	ids := make([]int, 0, len(vrows))
	for _, r := range vrows {
		ids = append(ids, int(r.ID))
	}
	var sp struct {
		Table struct {
			Rows json.RawMessage `json:"ROW_interface"`
		} `json:"TABLE_interface"`
	}
	if err := json.Unmarshal([]byte(outs[1]), &sp); err != nil {
		return fabric.State{}, fmt.Errorf("show interface switchport | json: %w", err)
	}
	var prows []struct {
		Interface string  `json:"interface"`
		Mode      string  `json:"oper_mode"`
		Access    flexInt `json:"access_vlan"`
		Native    flexInt `json:"native_vlan"`
		Trunk     string  `json:"trunk_vlans"`
	}
	if err := nxosRows(sp.Table.Rows, &prows); err != nil {
		return fabric.State{}, fmt.Errorf("show interface switchport | json: %w", err)
	}
	all := map[string]fabric.Port{}
	for _, r := range prows {
		p, err := iosPort(r.Interface, r.Mode, int(r.Access), int(r.Native), r.Trunk)
		if err != nil {
			return fabric.State{}, fmt.Errorf("show interface switchport | json: %s: %w", r.Interface, err)
		}
		all[r.Interface] = p
	}
	secs := textSections(outs[2])
	readShutdown(all, secs)
	lags, members := nxosLAG.parseLAGs(secs, all, names)
	for m := range members {
		delete(all, m)
	}
	acls := parseNXOSACLs(names, nxosACLLists(outs[3]), secs, lags)
	return fabric.State{VLANs: vlansOf(ids), Ports: wantPorts(all, names), LAGs: lags, ACLs: acls}, nil
}

// shutdownLine is a port's administrative state as the CLIs write it.
func shutdownLine(down bool) string {
	if down {
		return "shutdown"
	}
	return "no shutdown"
}

// readShutdown sets Down on the ports whose configuration lines (secs, as the running
// configuration shows them) shut them: the last of "shutdown" and "no shutdown" counts.
func readShutdown(ports map[string]fabric.Port, secs map[string][]string) {
	for name, p := range ports {
		for _, line := range secs[name] {
			switch line {
			case "shutdown":
				p.Down = true
			case "no shutdown":
				p.Down = false
			}
		}
		ports[name] = p
	}
}

// nxosRows reads a ROW_ value: one object or a list of them.
func nxosRows[T any](raw json.RawMessage, out *[]T) error {
	if len(raw) == 0 {
		return nil
	}
	if raw[0] == '[' {
		return json.Unmarshal(raw, out)
	}
	var one T
	if err := json.Unmarshal(raw, &one); err != nil {
		return err
	}
	*out = []T{one}
	return nil
}

func iosPort(name, mode string, access, native int, allowed string) (fabric.Port, error) {
	if mode != "trunk" {
		return fabric.Port{Name: name, Mode: fabric.ModeAccess, VLAN: access}, nil
	}
	ids, err := parseVLANList(allowed)
	if err != nil {
		return fabric.Port{}, err
	}
	return trunkPort(name, ids, native), nil
}

// jsonVersion reads one field of a "show version | json".
func jsonVersion(field, prefix string) func(string) string {
	return func(out string) string {
		var v map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			return ""
		}
		if s, ok := v[field].(string); ok {
			return prefix + s
		}
		return ""
	}
}
