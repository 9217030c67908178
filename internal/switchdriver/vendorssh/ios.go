package vendorssh

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"

	"github.com/metalwire/metalwire/internal/switchdriver/sshcli"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// The industry-standard CLI of EOS and NX-OS: "vlan N", "interface X" and "switchport" lines in
// configuration mode, "| json" on show commands.

// EOS is Arista EOS: scrapligo's arista_eos platform, "write memory" to save.
func EOS() sshcli.CommandSet {
	return sshcli.CommandSet{
		NetworkOS: "eos",
		Mode:      sshcli.ModePlatform,
		Platform:  "arista_eos",
		Save:      []string{"write memory"},
		Errors:    []*regexp.Regexp{regexp.MustCompile(`^% `)},
		Render: func(_ fabric.Endpoint, _ fabric.State, b fabric.Batch) ([]string, error) {
			return renderIOS("eos", false, b)
		},
		ReadCommands: func(fabric.Endpoint, []string) []string {
			return []string{"show vlan | json", "show interfaces switchport | json"}
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
		Mode:      sshcli.ModePlatform,
		Platform:  "cisco_nxos",
		Save:      []string{"copy running-config startup-config"},
		Errors:    []*regexp.Regexp{regexp.MustCompile(`^% `), regexp.MustCompile(`^ERROR:`)},
		Render: func(_ fabric.Endpoint, _ fabric.State, b fabric.Batch) ([]string, error) {
			return renderIOS("nxos", true, b)
		},
		ReadCommands: func(fabric.Endpoint, []string) []string {
			return []string{"show vlan brief | json", "show interface switchport | json"}
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
func renderIOS(os string, l2 bool, batch fabric.Batch) ([]string, error) {
	var lines []string
	iface := func(name string, body ...string) {
		lines = append(lines, "interface "+name)
		if l2 {
			lines = append(lines, "switchport")
		}
		lines = append(lines, body...)
		lines = append(lines, "exit")
	}
	for i, c := range batch {
		p := c.Port
		switch c.Op {
		case fabric.OpEnsureVLAN:
			lines = append(lines, fmt.Sprintf("vlan %d", c.VLAN.ID), "exit")
		case fabric.OpRemoveVLAN:
			lines = append(lines, fmt.Sprintf("no vlan %d", c.VLAN.ID))
		case fabric.OpAccessPort:
			iface(p.Name, "switchport mode access", fmt.Sprintf("switchport access vlan %d", p.VLAN))
		case fabric.OpTrunkPort:
			native := "no switchport trunk native vlan"
			if p.VLAN > 0 {
				native = fmt.Sprintf("switchport trunk native vlan %d", p.VLAN)
			}
			iface(p.Name, "switchport mode trunk", "switchport trunk allowed vlan "+joinInts(trunkVLANs(p), ","), native)
		case fabric.OpResetPort:
			idle, err := idleOf(os, i, c)
			if err != nil {
				return nil, err
			}
			iface(p.Name, "switchport mode access", fmt.Sprintf("switchport access vlan %d", idle),
				"no switchport trunk allowed vlan", "no switchport trunk native vlan")
		default:
			return nil, unsupported(os, i, c)
		}
	}
	return lines, nil
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
	return fabric.State{VLANs: vlansOf(ids), Ports: wantPorts(all, names)}, nil
}

// parseNXOS reads "show vlan brief | json" and "show interface switchport | json". NX-OS prints a
// table's only row as an object and several as a list.
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
	return fabric.State{VLANs: vlansOf(ids), Ports: wantPorts(all, names)}, nil
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
