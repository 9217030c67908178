package vendorssh

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/metalwire/metalwire/internal/switchdriver/sshcli"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// Drivers returns every driver of this package, for the manager's registry.
func Drivers() []sshcli.Driver {
	return []sshcli.Driver{
		{Set: EOS()}, {Set: NXOS()}, {Set: Junos()}, {Set: SONiC()}, {Set: DellOS10()}, {Set: Cumulus()},
	}
}

// mlagTerms are the vendors' names of a multi-chassis LAG, for the OSes that refuse one.
var mlagTerms = map[string]string{"junos": "MC-LAG", "dellos10": "VLT"}

// unsupported is the error for a change the command set has no rendering for yet.
func unsupported(os string, i int, c fabric.Change) error {
	if c.Op == fabric.OpEnsureLAG && c.LAG.MLAG != nil {
		return fmt.Errorf("change %d (%s): %w (networkOS %s renders no multi-chassis LAG (%s))", i, c, fabric.ErrUnsupported, os, mlagTerms[os])
	}
	return fmt.Errorf("change %d (%s): %w (networkOS %s has no %s yet)", i, c, fabric.ErrUnsupported, os, c.Op)
}

// trunkVLANs is what a trunk carries: its tagged VLANs and, untagged, its native VLAN. The CLIs
// pass a trunk's native VLAN only when it is in the allowed list, so it is added there.
func trunkVLANs(p fabric.Port) []int {
	out := slices.Clone(p.Trunk)
	if p.VLAN > 0 && !slices.Contains(out, p.VLAN) {
		out = append(out, p.VLAN)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// trunkPort is a trunk as a switch shows it: allowed VLANs and a native VLAN. The native VLAN
// counts only when it is allowed (otherwise the trunk carries no untagged traffic: native 0).
func trunkPort(name string, allowed []int, native int) fabric.Port {
	p := fabric.Port{Name: name, Mode: fabric.ModeTrunk}
	if native > 0 && slices.Contains(allowed, native) {
		p.VLAN = native
	}
	for _, v := range allowed {
		if v != p.VLAN {
			p.Trunk = append(p.Trunk, v)
		}
	}
	return p
}

// idleOf is a reset's VLAN; these switches have no port without a VLAN.
func idleOf(os string, i int, c fabric.Change) (int, error) {
	if c.Port.VLAN < 1 {
		return 0, fmt.Errorf("change %d (%s): networkOS %s puts an idle port in an access VLAN; set the NetworkDevice's idleVLAN", i, c, os)
	}
	return c.Port.VLAN, nil
}

// joinInts writes "1001,1002".
func joinInts(ids []int) string {
	s := make([]string, len(ids))
	for i, v := range ids {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

// parseVLANList reads the CLIs' lists: "1001,1003-1005", "ALL", "1-4094", "none".
func parseVLANList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "", "none":
		return nil, nil
	case "all":
		s = "1-4094"
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		a, b, isRange := strings.Cut(strings.TrimSpace(part), "-")
		first, err := strconv.Atoi(a)
		if err != nil {
			return nil, fmt.Errorf("VLAN list %q: %w", s, err)
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(b); err != nil {
				return nil, fmt.Errorf("VLAN list %q: %w", s, err)
			}
		}
		for v := first; v <= last; v++ {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// flexInt reads a JSON number the OSes print as a number or as a string.
type flexInt int

func (f *flexInt) UnmarshalJSON(b []byte) error {
	var n int
	if err := json.Unmarshal(b, &n); err == nil {
		*f = flexInt(n)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("%q is not a number", s)
	}
	*f = flexInt(n)
	return nil
}

// wantPorts keeps the named ports of all.
func wantPorts(all map[string]fabric.Port, names []string) map[string]fabric.Port {
	out := map[string]fabric.Port{}
	for _, n := range names {
		if p, ok := all[n]; ok {
			out[n] = p
		}
	}
	return out
}

// vlansOf turns ids into the State's VLAN list, ascending.
func vlansOf(ids []int) []fabric.VLAN {
	slices.Sort(ids)
	ids = slices.Compact(ids)
	out := make([]fabric.VLAN, len(ids))
	for i, id := range ids {
		out[i] = fabric.VLAN{ID: id}
	}
	return out
}

// batchItem is one change of a batch as an OS's renderer sees it: a VLAN change, a port change
// with the lines the port gets (body), or a change with lines of its own, sent as they are
// (a bond's).
type batchItem struct {
	op    fabric.Op
	vlan  int
	port  string
	body  []string
	lines []string
}

// batchRun is a stretch of a batch rendered together: lines of their own, or the VLANs of
// consecutive ensure-vlan (or remove-vlan) changes, or the ports of consecutive port changes
// grouped by the lines they get, in the order each group's first port comes.
type batchRun struct {
	lines  []string
	vlanOp fabric.Op
	vlans  []int
	groups []portGroup
}

// portGroup is ports that get the same lines.
type portGroup struct {
	body  []string
	ports []string
}

// batchRuns splits the items into runs, keeping the batch's order: VLANs ensured before the ports
// that use them and removed after; OSes whose CLI takes ranges name each run's VLANs and each
// group's ports in one line.
func batchRuns(items []batchItem) []batchRun {
	isPort := func(it batchItem) bool { return it.body != nil }
	var out []batchRun
	for i := 0; i < len(items); {
		if items[i].lines != nil {
			out = append(out, batchRun{lines: items[i].lines})
			i++
			continue
		}
		j := i + 1
		for j < len(items) && items[j].lines == nil && isPort(items[j]) == isPort(items[i]) && (isPort(items[i]) || items[j].op == items[i].op) {
			j++
		}
		run := items[i:j]
		i = j
		if !isPort(run[0]) {
			r := batchRun{vlanOp: run[0].op}
			for _, it := range run {
				r.vlans = append(r.vlans, it.vlan)
			}
			out = append(out, r)
			continue
		}
		var r batchRun
		at := map[string]int{}
		for _, it := range run {
			key := strings.Join(it.body, "\n")
			k, ok := at[key]
			if !ok {
				k = len(r.groups)
				at[key] = k
				r.groups = append(r.groups, portGroup{body: it.body})
			}
			r.groups[k].ports = append(r.groups[k].ports, it.port)
		}
		out = append(out, r)
	}
	return out
}
