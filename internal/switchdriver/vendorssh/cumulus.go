package vendorssh

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/metalwire/metalwire/internal/switchdriver/sshcli"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// DefaultCumulusBridge is the VLAN-aware bridge domain NVUE configures when the NetworkDevice
// names none (its bridge field).
const DefaultCumulusBridge = "br_default"

// Cumulus is NVIDIA Cumulus Linux with NVUE over SSH exec channels. Each batch starts with "nv
// config detach" (dropping whatever a failed batch left pending), stages its "nv set/unset"
// lines and ends with "nv config apply -y" and "nv config save": one revision per batch, so a
// batch whose line fails applies nothing. "nv config show -o json" reads the applied
// configuration back.
func Cumulus() sshcli.CommandSet {
	return sshcli.CommandSet{
		NetworkOS: "cumulus",
		ACLs:      true,
		PortState: true,
		Mode:      sshcli.ModeExec,
		Save:      []string{"nv config apply -y", "nv config save"},
		Errors: []*regexp.Regexp{
			regexp.MustCompile(`^Error: `),
			regexp.MustCompile(`command not found`),
			regexp.MustCompile(`Permission denied`),
		},
		Render: renderCumulus,
		ReadCommands: func(fabric.Endpoint, []string) []string {
			return []string{"nv config show -o json"}
		},
		ParseState:     parseCumulus,
		VersionCommand: "nv --version",
		ParseVersion: func(out string) string {
			if i := strings.Index(out, "("); i >= 0 {
				return strings.TrimSuffix(strings.TrimSpace(out[i+1:]), ")")
			}
			return strings.TrimSpace(out)
		},
	}
}

func cumulusBridge(ep fabric.Endpoint) string {
	if ep.Bridge != "" {
		return ep.Bridge
	}
	return DefaultCumulusBridge
}

// renderCumulus stages a batch in one NVUE revision (BR is the bridge domain):
//
//	ensure-vlan: nv set bridge domain BR vlan N      remove-vlan: nv unset bridge domain BR vlan N
//	access:      nv unset interface P bridge domain BR / nv set interface P bridge domain BR access N /
//	             nv set interface P link state down (portStatus down; else up)
//	trunk:       nv unset interface P bridge domain BR / nv set interface P bridge domain BR vlan L /
//	             nv set interface P bridge domain BR untagged NATIVE (with a native VLAN) /
//	             nv set interface P link state down (or up)
//	reset:       access in the idle VLAN, link state up
//
// NVUE takes ranges and lists, so the VLANs of consecutive ensure (or remove) changes go in one
// line ("vlan 1001-1003,1005"), and the ports of consecutive port changes that get the same
// lines in one interface list ("interface swp1-4,swp7").
//
// Bonds: see renderCumulusLAG; access lists: renderCumulusACL.
func renderCumulus(ep fabric.Endpoint, have fabric.State, batch fabric.Batch) ([]string, error) {
	br := cumulusBridge(ep)
	// A port's body is its lines after "nv set interface P ".
	items := make([]batchItem, 0, len(batch))
	for i, c := range batch {
		p := c.Port
		it := batchItem{op: c.Op, vlan: c.VLAN.ID, port: p.Name}
		dom := "bridge domain " + br + " "
		switch c.Op {
		case fabric.OpEnsureVLAN, fabric.OpRemoveVLAN:
		case fabric.OpAccessPort:
			it.body = []string{fmt.Sprintf("%saccess %d", dom, p.VLAN), linkState(p.Down)}
		case fabric.OpTrunkPort:
			it.body = []string{dom + "vlan " + joinInts(trunkVLANs(p))}
			if p.VLAN > 0 {
				it.body = append(it.body, fmt.Sprintf("%suntagged %d", dom, p.VLAN))
			}
			it.body = append(it.body, linkState(p.Down))
		case fabric.OpResetPort:
			idle, err := idleOf("cumulus", i, c)
			if err != nil {
				return nil, err
			}
			it.body = []string{fmt.Sprintf("%saccess %d", dom, idle), linkState(false)}
		case fabric.OpEnsureACL, fabric.OpRemoveACL:
			lines, err := renderCumulusACL(have, i, c)
			if err != nil {
				return nil, err
			}
			items = append(items, batchItem{op: c.Op, lines: lines})
			continue
		case fabric.OpEnsureLAG, fabric.OpRemoveLAG:
			lines, err := renderCumulusLAG(ep, have, i, c)
			if err != nil {
				return nil, err
			}
			items = append(items, batchItem{op: c.Op, lines: lines})
			continue
		default:
			return nil, unsupported("cumulus", i, c)
		}
		items = append(items, it)
	}
	lines := []string{"nv config detach"}
	for _, run := range batchRuns(items) {
		switch {
		case run.lines != nil:
			lines = append(lines, run.lines...)
		case run.groups == nil:
			verb := "set"
			if run.vlanOp == fabric.OpRemoveVLAN {
				verb = "unset"
			}
			lines = append(lines, fmt.Sprintf("nv %s bridge domain %s vlan %s", verb, br, strings.Join(idRanges(run.vlans), ",")))
		default:
			for _, g := range run.groups {
				ports := strings.Join(portRanges(g.ports), ",")
				lines = append(lines, fmt.Sprintf("nv unset interface %s bridge domain %s", ports, br))
				for _, tail := range g.body {
					lines = append(lines, fmt.Sprintf("nv set interface %s %s", ports, tail))
				}
			}
		}
	}
	return lines, nil
}

// parseCumulus reads "nv config show -o json": a list whose "set" item is the configuration tree.
func parseCumulus(ep fabric.Endpoint, names []string, outs []string) (fabric.State, error) {
	type domain struct {
		Access   flexInt                    `json:"access"`
		VLAN     map[string]json.RawMessage `json:"vlan"`
		Untagged flexInt                    `json:"untagged"`
	}
	var doc []struct {
		Set *struct {
			Bridge struct {
				Domain map[string]domain `json:"domain"`
			} `json:"bridge"`
			Interface map[string]struct {
				Bridge struct {
					Domain map[string]domain `json:"domain"`
				} `json:"bridge"`
				Description string    `json:"description"`
				Bond        *nvueBond `json:"bond"`
				Link        struct {
					State nvueState `json:"state"`
				} `json:"link"`
				ACL map[string]map[string]json.RawMessage `json:"acl"`
			} `json:"interface"`
			ACL map[string]nvueACL `json:"acl"`
		} `json:"set"`
	}
	if err := json.Unmarshal([]byte(outs[0]), &doc); err != nil {
		return fabric.State{}, fmt.Errorf("nv config show -o json: %w", err)
	}
	br := cumulusBridge(ep)
	keys := func(m map[string]json.RawMessage) ([]int, error) {
		var ids []int
		for k := range m {
			l, err := parseVLANList(k)
			if err != nil {
				return nil, err
			}
			ids = append(ids, l...)
		}
		return ids, nil
	}
	st := fabric.State{Ports: map[string]fabric.Port{}}
	for _, item := range doc {
		if item.Set == nil {
			continue
		}
		ids, err := keys(item.Set.Bridge.Domain[br].VLAN)
		if err != nil {
			return fabric.State{}, fmt.Errorf("nv config show: bridge domain %s: %w", br, err)
		}
		st.VLANs = vlansOf(ids)
		all := map[string]fabric.Port{}
		for name, iface := range item.Set.Interface {
			d, inBridge := iface.Bridge.Domain[br]
			switch {
			case !inBridge:
				all[name] = fabric.Port{Name: name}
			case d.VLAN != nil:
				allowed, err := keys(d.VLAN)
				if err != nil {
					return fabric.State{}, fmt.Errorf("nv config show: interface %s: %w", name, err)
				}
				all[name] = trunkPort(name, vlansToInts(vlansOf(allowed)), int(d.Untagged))
			default:
				all[name] = fabric.Port{Name: name, Mode: fabric.ModeAccess, VLAN: int(d.Access)}
			}
			p := all[name]
			p.Down = iface.Link.State == "down"
			all[name] = p
		}
		st.LAGs = map[string]fabric.LAG{}
		for name, iface := range item.Set.Interface {
			if iface.Bond == nil || !slices.Contains(names, name) {
				continue
			}
			l := iface.Bond.lag(name, iface.Description, all[name])
			for _, m := range l.Members {
				delete(all, m)
			}
			st.LAGs[name] = l
		}
		st.Ports = wantPorts(all, names)
		binds := map[string]map[string]map[string]json.RawMessage{}
		for name, iface := range item.Set.Interface {
			if len(iface.ACL) > 0 {
				binds[name] = iface.ACL
			}
		}
		st.ACLs = cumulusACLs(names, item.Set.ACL, binds, st.LAGs)
	}
	return st, nil
}

// linkState is a port's administrative state line (after "nv set interface P ").
func linkState(down bool) string {
	if down {
		return "link state down"
	}
	return "link state up"
}

// nvueState is an interface's "link state" in "nv config show -o json": NVUE writes the value as
// a string ("down") or as an object keyed by it ({"down": {}}); both read as the word.
type nvueState string

func (n *nvueState) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*n = nvueState(s)
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("link state %s is neither a word nor an object", b)
	}
	for k := range m {
		*n = nvueState(k)
	}
	return nil
}

func vlansToInts(v []fabric.VLAN) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = x.ID
	}
	return out
}
