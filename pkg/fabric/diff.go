package fabric

import (
	"maps"
	"slices"
	"sort"
)

// PortWant is one switch port a host's network needs.
type PortWant struct {
	Switch string
	Port   string
	Mode   PortMode
	VLAN   int
	// Native is a trunk's untagged VLAN (0: none).
	Native int
	// MTU of the port (0: the switch's own).
	MTU int
	// LAG makes the port a member of a bond: the VLAN configuration is the bond's.
	LAG *LAGWant
	// Down shuts the port (the bond, for a member): a network's portStatus down. A port that
	// carries several networks is down when any of them asks it.
	Down bool
	// ACL binds the network's access list to the port (the bond, for a member).
	ACL *ACLWant
}

// ACLWant is the access list of one host's network on the ports that carry it.
type ACLWant struct {
	// Name and Cookie are ACLName and ACLCookie of the host and network.
	Name   string
	Cookie uint64
	// HostMAC is the MAC of the host's card behind the port.
	HostMAC     string
	Rules       []ACLRule
	DefaultDeny bool
}

// Desired builds each switch's desired state from the ports hosts need. Ports named twice in
// trunk mode carry every VLAN named; a VLAN is present on a switch when a port there carries it.
// Ports wanted as members of a LAG make the LAG, which carries their VLANs as a port would.
func Desired(wants []PortWant) map[string]State {
	out := map[string]State{}
	for _, w := range wants {
		st, ok := out[w.Switch]
		if !ok {
			st = State{Ports: map[string]Port{}}
		}
		if w.LAG != nil {
			if st.LAGs == nil {
				st.LAGs = map[string]LAG{}
			}
			l, seen := st.LAGs[w.LAG.Name]
			if !seen {
				l = LAG{Name: w.LAG.Name, LACP: w.LAG.LACP, FastRate: w.LAG.FastRate, MLAG: w.LAG.MLAG}
			}
			if !slices.Contains(l.Members, w.Port) {
				l.Members = append(l.Members, w.Port)
				sort.Strings(l.Members)
			}
			l.Port = merge(l.Port, seen, w, w.LAG.Name)
			st.LAGs[w.LAG.Name] = l
		} else {
			p, seen := st.Ports[w.Port]
			st.Ports[w.Port] = merge(p, seen, w, w.Port)
		}
		out[w.Switch] = st
	}
	for _, w := range wants {
		if w.ACL != nil {
			out[w.Switch] = addACL(out[w.Switch], w)
		}
	}
	for name, st := range out {
		ids := map[int]bool{}
		for pn, p := range st.Ports {
			p = normalTrunk(p)
			st.Ports[pn] = p
			for _, v := range portVLANs(p) {
				ids[v] = true
			}
		}
		for ln, l := range st.LAGs {
			l.Port = normalTrunk(l.Port)
			st.LAGs[ln] = l
			for _, v := range portVLANs(l.Port) {
				ids[v] = true
			}
		}
		for _, v := range slices.Sorted(maps.Keys(ids)) {
			st.VLANs = append(st.VLANs, VLAN{ID: v})
		}
		out[name] = st
	}
	return out
}

// merge adds one want to the configuration of the port (or bond) it names.
func merge(p Port, seen bool, w PortWant, name string) Port {
	switch {
	case w.Mode == ModeTrunk:
		if !seen || p.Mode != ModeTrunk {
			p = Port{Name: name, Mode: ModeTrunk}
		}
		if w.VLAN != 0 && !slices.Contains(p.Trunk, w.VLAN) {
			p.Trunk = append(p.Trunk, w.VLAN)
			sort.Ints(p.Trunk)
		}
		if w.Native != 0 {
			p.VLAN = w.Native
		}
		if w.MTU != 0 {
			p.MTU = w.MTU
		}
	case !seen:
		p = Port{Name: name, Mode: ModeAccess, VLAN: w.VLAN, MTU: w.MTU}
	}
	p.Down = p.Down || w.Down
	return p
}

// addACL binds a want's access list to its port, or to its bond with the bond's members (every
// LAG of st is complete when it is called). A trunk's list matches the network's VLAN only.
func addACL(st State, w PortWant) State {
	if st.ACLs == nil {
		st.ACLs = map[string]ACL{}
	}
	a, seen := st.ACLs[w.ACL.Name]
	if !seen {
		a = ACL{Name: w.ACL.Name, Cookie: w.ACL.Cookie, Port: w.Port, Rules: slices.Clone(w.ACL.Rules), DefaultDeny: w.ACL.DefaultDeny}
		if w.LAG != nil {
			a.Port, a.Members = w.LAG.Name, slices.Clone(st.LAGs[w.LAG.Name].Members)
		}
		if w.Mode == ModeTrunk {
			a.VLAN = w.VLAN
		}
	}
	if w.ACL.HostMAC != "" && !slices.Contains(a.HostMACs, w.ACL.HostMAC) {
		a.HostMACs = append(a.HostMACs, w.ACL.HostMAC)
		sort.Strings(a.HostMACs)
	}
	st.ACLs[w.ACL.Name] = a
	return st
}

// normalTrunk writes a trunk one way, as every driver reads one back: its native (untagged)
// VLAN is not among its tagged ones, and a trunk that carries only its native VLAN is an access
// port in it.
func normalTrunk(p Port) Port {
	if p.Mode != ModeTrunk || p.VLAN == 0 {
		return p
	}
	p.Trunk = slices.DeleteFunc(slices.Clone(p.Trunk), func(v int) bool { return v == p.VLAN })
	if len(p.Trunk) == 0 {
		p.Mode, p.Trunk = ModeAccess, nil
	}
	return p
}

// Record is what the controller configured on a switch: the only ports, LAGs and VLANs it may
// change.
type Record struct {
	Ports []string
	VLANs []int
	// LAGs are the bonds it made, by name.
	LAGs []string
	// ACLs are the access lists it bound, by name.
	ACLs []string
}

// Diff returns the changes that take a switch from have (as read back) to want, touching only
// ports that want names or that rec says the controller configured. A recorded port that want
// no longer names goes back to idle (an access port in the idle VLAN); a recorded VLAN that no
// wanted port carries is removed. The order is: VLANs ensured, ports set, ports reset, VLANs
// removed, so no port ever points at a VLAN the switch lacks. Equal states give no change.
func Diff(want, have State, rec Record, idle int) Batch {
	// Lists no longer wanted go first, while the ports and bonds they name are as they were.
	var b Batch
	aclNames := slices.Clone(rec.ACLs)
	sort.Strings(aclNames)
	for _, name := range slices.Compact(aclNames) {
		cur, exists := have.ACLs[name]
		if _, wanted := want.ACLs[name]; !wanted && exists {
			b = append(b, Change{Op: OpRemoveACL, ACL: cur})
		}
	}
	haveVLAN := map[int]bool{}
	for _, v := range have.VLANs {
		haveVLAN[v.ID] = true
	}
	wantVLAN := map[int]bool{}
	for _, v := range want.VLANs {
		wantVLAN[v.ID] = true
		if !haveVLAN[v.ID] {
			b = append(b, Change{Op: OpEnsureVLAN, VLAN: v})
		}
	}
	// Bonds no longer wanted go first, their members back to idle access ports, so that a
	// member wanted again as a port (or in another bond) is free; then the wanted bonds.
	members := map[string]bool{}
	for _, l := range want.LAGs {
		for _, m := range l.Members {
			members[m] = true
		}
	}
	lagNames := slices.Clone(rec.LAGs)
	sort.Strings(lagNames)
	for _, name := range slices.Compact(lagNames) {
		cur, exists := have.LAGs[name]
		if _, wanted := want.LAGs[name]; wanted || !exists {
			continue
		}
		cur.Port = Port{Name: name, Mode: ModeAccess, VLAN: idle}
		cur.Members = sortedNames(cur.Members)
		b = append(b, Change{Op: OpRemoveLAG, LAG: cur})
	}
	for _, name := range slices.Sorted(maps.Keys(want.LAGs)) {
		l := want.LAGs[name]
		if cur, ok := have.LAGs[name]; ok && SameLAG(cur, l) {
			continue
		}
		b = append(b, Change{Op: OpEnsureLAG, LAG: l})
	}
	for _, name := range sortedPortNames(want.Ports) {
		p := want.Ports[name]
		if cur, ok := have.Ports[name]; ok && samePort(cur, p) {
			continue
		}
		op := OpAccessPort
		if p.Mode == ModeTrunk {
			op = OpTrunkPort
		}
		b = append(b, Change{Op: op, Port: p})
	}
	for _, name := range slices.Sorted(maps.Keys(want.ACLs)) {
		a := want.ACLs[name]
		if cur, ok := have.ACLs[name]; ok && SameACL(a, cur) {
			continue
		}
		b = append(b, Change{Op: OpEnsureACL, ACL: a})
	}
	resets := slices.Clone(rec.Ports)
	sort.Strings(resets)
	for _, name := range slices.Compact(resets) {
		if _, wanted := want.Ports[name]; wanted || members[name] {
			continue // a member of a wanted bond is the bond's now
		}
		idlePort := Port{Name: name, Mode: ModeAccess, VLAN: idle}
		if cur, ok := have.Ports[name]; ok && samePort(cur, idlePort) {
			continue
		}
		if _, exists := have.Ports[name]; !exists {
			continue // the port is gone from the switch: nothing to reset
		}
		b = append(b, Change{Op: OpResetPort, Port: idlePort})
	}
	removes := slices.Clone(rec.VLANs)
	sort.Ints(removes)
	for _, id := range slices.Compact(removes) {
		if !wantVLAN[id] && haveVLAN[id] && id != idle {
			b = append(b, Change{Op: OpRemoveVLAN, VLAN: VLAN{ID: id}})
		}
	}
	return b
}

// RecordOf is the record to keep after want was applied.
func RecordOf(want State) Record {
	rec := Record{Ports: sortedPortNames(want.Ports), LAGs: slices.Sorted(maps.Keys(want.LAGs)), ACLs: slices.Sorted(maps.Keys(want.ACLs))}
	for _, v := range want.VLANs {
		rec.VLANs = append(rec.VLANs, v.ID)
	}
	return rec
}

func samePort(a, b Port) bool {
	if a.Mode != b.Mode || a.VLAN != b.VLAN || a.MTU != b.MTU || a.Down != b.Down {
		return false
	}
	return a.Mode != ModeTrunk || slices.Equal(a.Trunk, b.Trunk)
}

// SamePort says whether two port configurations carry the same VLANs the same way.
func SamePort(a, b Port) bool { return samePort(a, b) }

func portVLANs(p Port) []int {
	if p.Mode == ModeTrunk {
		if p.VLAN != 0 && !slices.Contains(p.Trunk, p.VLAN) {
			return append(slices.Clone(p.Trunk), p.VLAN)
		}
		return p.Trunk
	}
	return []int{p.VLAN}
}

func sortedPortNames(m map[string]Port) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func sortInts(s []int) { sort.Ints(s) }

// InPlace says whether the switch already shows (st) what c asks for, so it need not be sent.
// A reset is in place when the port is an access port of the idle VLAN (or of no mode when the
// idle VLAN is 0).
func InPlace(c Change, st State) bool {
	hasVLAN := slices.ContainsFunc(st.VLANs, func(v VLAN) bool { return v.ID == c.VLAN.ID })
	cur, exists := st.Ports[c.Port.Name]
	switch c.Op {
	case OpEnsureVLAN:
		return hasVLAN
	case OpRemoveVLAN:
		return !hasVLAN
	case OpAccessPort:
		return exists && cur.Mode == ModeAccess && cur.VLAN == c.Port.VLAN && cur.MTU == c.Port.MTU && cur.Down == c.Port.Down
	case OpTrunkPort:
		want := slices.Compact(slices.Sorted(slices.Values(c.Port.Trunk)))
		return exists && cur.Mode == ModeTrunk && cur.VLAN == c.Port.VLAN && slices.Equal(cur.Trunk, want) && cur.MTU == c.Port.MTU && cur.Down == c.Port.Down
	case OpEnsureACL:
		cur, ok := st.ACLs[c.ACL.Name]
		return ok && SameACL(c.ACL, cur)
	case OpRemoveACL:
		_, ok := st.ACLs[c.ACL.Name]
		return !ok
	case OpEnsureLAG:
		cur, ok := st.LAGs[c.LAG.Name]
		return ok && SameLAG(cur, c.LAG)
	case OpRemoveLAG:
		_, ok := st.LAGs[c.LAG.Name]
		return !ok
	case OpResetPort:
		if c.Port.VLAN == 0 {
			return exists && cur.Mode == "" && cur.VLAN == 0 && len(cur.Trunk) == 0 && cur.MTU == 0 && !cur.Down
		}
		return exists && cur.Mode == ModeAccess && cur.VLAN == c.Port.VLAN && cur.MTU == 0 && !cur.Down
	}
	return false
}
