package fabric

import (
	"fmt"
	"slices"
	"sort"
)

// DriftedPort is a port the controller configured that the switch now reports otherwise:
// someone changed it at the switch.
type DriftedPort struct {
	// Set is what the controller set on the port last.
	Set Port
	// Found is what the switch reports now; nil when the port is gone from the switch.
	Found *Port
}

// String says what differs: "port eth1: set access vlan 1001, found access vlan 7".
func (d DriftedPort) String() string {
	found := "not on the switch"
	if d.Found != nil {
		found = "found " + d.Found.Describe()
	}
	return fmt.Sprintf("port %s: set %s, %s", d.Set.Name, d.Set.Describe(), found)
}

// Describe reads as a port's configuration: "access vlan 1001", "trunk vlans [1001 1002]
// native 0".
func (p Port) Describe() string {
	s := fmt.Sprintf("%s vlan %d", p.Mode, p.VLAN)
	if p.Mode == ModeTrunk {
		s = fmt.Sprintf("trunk vlans %v native %d", p.Trunk, p.VLAN)
	}
	if p.MTU != 0 {
		s += fmt.Sprintf(" mtu %d", p.MTU)
	}
	if p.Down {
		s += " down"
	}
	return s
}

// Drift compares what the controller set on each port (set: its record of the last pass) with
// what the switch reports (have, read back), and returns the ports that differ, by name.
func Drift(set []Port, have State) []DriftedPort {
	var out []DriftedPort
	for _, s := range set {
		cur, ok := have.Ports[s.Name]
		if l, bond := have.LAGs[s.Name]; bond && !ok {
			cur, ok = l.Port, true // a bond's VLANs are those of its port
		}
		switch {
		case !ok:
			out = append(out, DriftedPort{Set: s})
		case !samePort(cur, s):
			out = append(out, DriftedPort{Set: s, Found: &cur})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Set.Name < out[j].Set.Name })
	return out
}

// WithoutRepairs drops from b the changes that would only put a drifted port back as it was set
// (its wanted configuration is still what was set): under driftPolicy report a drifted port is
// left as found, while a port whose wanted configuration changed (its host left or moved) still
// gets the change.
func WithoutRepairs(b Batch, drifted []DriftedPort, want State, idle int) Batch {
	repairOnly := map[string]bool{}
	for _, d := range drifted {
		w, wanted := want.Ports[d.Set.Name]
		if l, bond := want.LAGs[d.Set.Name]; bond && !wanted {
			w, wanted = l.Port, true // a bond's VLANs are those of its port
		}
		if !wanted {
			w = Port{Name: d.Set.Name, Mode: ModeAccess, VLAN: idle}
		}
		if samePort(w, d.Set) {
			repairOnly[d.Set.Name] = true
		}
	}
	return slices.DeleteFunc(slices.Clone(b), func(c Change) bool {
		switch c.Op {
		case OpAccessPort, OpTrunkPort, OpResetPort:
			return repairOnly[c.Port.Name]
		case OpEnsureLAG:
			return repairOnly[c.LAG.Name]
		}
		return false
	})
}
