package vendorssh

import (
	"bufio"
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/metalwire/metalwire/internal/switchdriver/sshcli"
	"github.com/metalwire/metalwire/pkg/fabric"
)

//go:embed platforms/dell_os10.yaml
var dellOS10Platform []byte

// DellOS10 is Dell SmartFabric OS10: our scrapligo platform definition, VLANs as "interface vlan
// N", a trunk's untagged VLAN as its "switchport access vlan", "write memory" to save. OS10 has no
// JSON show output; the running configuration is read back as text.
func DellOS10() sshcli.CommandSet {
	return sshcli.CommandSet{
		NetworkOS:          "dellos10",
		PortState:          true,
		ACLs:               true,
		Mode:               sshcli.ModePlatform,
		PlatformDefinition: dellOS10Platform,
		Save:               []string{"write memory"},
		Errors:             []*regexp.Regexp{regexp.MustCompile(`^% `)},
		Render:             renderOS10,
		ReadCommands: func(fabric.Endpoint, []string) []string {
			return []string{"show running-configuration"}
		},
		ParseState:     parseOS10,
		VersionCommand: "show version",
		ParseVersion: func(out string) string {
			for _, l := range strings.Split(out, "\n") {
				if v, ok := strings.CutPrefix(strings.TrimSpace(l), "OS Version:"); ok {
					return "OS10 " + strings.TrimSpace(v)
				}
			}
			return ""
		},
	}
}

// renderOS10 types a batch in configuration mode. OS10's "switchport trunk allowed vlan" adds to
// the list, so VLANs the port carries (as read back) and should not are taken away first.
//
//	ensure-vlan: interface vlan N / exit       remove-vlan: no interface vlan N
//	access:      interface P / [no switchport trunk allowed vlan X] / switchport mode access /
//	             switchport access vlan N / exit
//	trunk:       interface P / switchport mode trunk / [no switchport trunk allowed vlan X] /
//	             switchport trunk allowed vlan L / switchport access vlan NATIVE
//	             (no native: no switchport access vlan) / exit
//	reset:       access in the idle VLAN
//
// Every port change ends with the port's state before exit: "shutdown" (portStatus down) or
// "no shutdown" (a reset port is up).
//
// Bonds: port-channels, as on EOS (lagDialect.renderLAG); no VLT. Access lists: renderOS10ACL.
func renderOS10(ep fabric.Endpoint, have fabric.State, batch fabric.Batch) ([]string, error) {
	var lines []string
	drop := func(name string, keep []int) {
		cur := have.Ports[name]
		if cur.Mode != fabric.ModeTrunk {
			return
		}
		for _, v := range cur.Trunk {
			if !slices.Contains(keep, v) {
				lines = append(lines, fmt.Sprintf("no switchport trunk allowed vlan %d", v))
			}
		}
	}
	access := func(name string, vlan int, down bool) {
		lines = append(lines, "interface "+name)
		drop(name, nil)
		lines = append(lines, "switchport mode access", fmt.Sprintf("switchport access vlan %d", vlan), shutdownLine(down), "exit")
	}
	for i, c := range batch {
		p := c.Port
		switch c.Op {
		case fabric.OpEnsureVLAN:
			lines = append(lines, fmt.Sprintf("interface vlan %d", c.VLAN.ID), "exit")
		case fabric.OpRemoveVLAN:
			lines = append(lines, fmt.Sprintf("no interface vlan %d", c.VLAN.ID))
		case fabric.OpAccessPort:
			access(p.Name, p.VLAN, p.Down)
		case fabric.OpTrunkPort:
			lines = append(lines, "interface "+p.Name, "switchport mode trunk")
			drop(p.Name, p.Trunk)
			lines = append(lines, "switchport trunk allowed vlan "+joinInts(p.Trunk))
			if p.VLAN > 0 {
				lines = append(lines, fmt.Sprintf("switchport access vlan %d", p.VLAN))
			} else {
				lines = append(lines, "no switchport access vlan")
			}
			lines = append(lines, shutdownLine(p.Down), "exit")
		case fabric.OpResetPort:
			idle, err := idleOf("dellos10", i, c)
			if err != nil {
				return nil, err
			}
			access(p.Name, idle, false)
		case fabric.OpEnsureLAG, fabric.OpRemoveLAG:
			l, err := os10LAG.renderLAG(ep, have, i, c)
			if err != nil {
				return nil, err
			}
			lines = append(lines, l...)
		case fabric.OpEnsureACL, fabric.OpRemoveACL:
			l, err := renderOS10ACL(have, i, c)
			if err != nil {
				return nil, err
			}
			lines = append(lines, l...)
		default:
			return nil, unsupported("dellos10", i, c)
		}
	}
	return lines, nil
}

// parseOS10 reads "show running-configuration": "interface vlanN" blocks are the VLANs;
// "interface ethernetX" blocks the ports, whose defaults (access, VLAN 1) are not printed. A
// trunk's untagged VLAN is its access VLAN; VLAN 1, the default, reads as none.
func parseOS10(_ fabric.Endpoint, names []string, outs []string) (fabric.State, error) {
	var ids []int
	all := map[string]fabric.Port{}
	type block struct {
		mode    string
		access  int
		allowed []int
	}
	var cur *block
	var curName string
	flush := func() {
		if cur == nil {
			return
		}
		if cur.mode == "trunk" {
			p := fabric.Port{Name: curName, Mode: fabric.ModeTrunk, Trunk: cur.allowed}
			if cur.access != 1 {
				p.VLAN = cur.access
			}
			all[curName] = p
		} else {
			all[curName] = fabric.Port{Name: curName, Mode: fabric.ModeAccess, VLAN: cur.access}
		}
		cur = nil
	}
	sc := bufio.NewScanner(strings.NewReader(outs[0]))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " ")
		if !strings.HasPrefix(line, " ") {
			flush()
			name, ok := strings.CutPrefix(line, "interface ")
			if !ok {
				continue
			}
			name = strings.ReplaceAll(name, " ", "")
			if id, isVLAN := strings.CutPrefix(name, "vlan"); isVLAN {
				n, err := strconv.Atoi(id)
				if err != nil {
					return fabric.State{}, fmt.Errorf("show running-configuration: %q: %w", line, err)
				}
				ids = append(ids, n)
				continue
			}
			cur, curName = &block{mode: "access", access: 1}, name
			continue
		}
		if cur == nil {
			continue
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 3 && f[0] == "switchport" && f[1] == "mode":
			cur.mode = f[2]
		case len(f) == 4 && f[0] == "switchport" && f[1] == "access" && f[2] == "vlan":
			n, err := strconv.Atoi(f[3])
			if err != nil {
				return fabric.State{}, fmt.Errorf("show running-configuration: %s: %q: %w", curName, line, err)
			}
			cur.access = n
		case len(f) == 5 && f[0] == "switchport" && f[1] == "trunk" && f[2] == "allowed" && f[3] == "vlan":
			l, err := parseVLANList(f[4])
			if err != nil {
				return fabric.State{}, fmt.Errorf("show running-configuration: %s: %w", curName, err)
			}
			cur.allowed = l
		}
	}
	flush()
	secs := textSections(outs[0])
	readShutdown(all, secs)
	lags, members := os10LAG.parseLAGs(secs, all, names)
	for m := range members {
		delete(all, m)
	}
	acls := parseOS10ACLs(names, os10ACLLists(outs[0]), secs, lags)
	return fabric.State{VLANs: vlansOf(ids), Ports: wantPorts(all, names), LAGs: lags, ACLs: acls}, nil
}
