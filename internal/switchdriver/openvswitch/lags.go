package openvswitch

import (
	"context"
	"fmt"
	"slices"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// A bond on Open vSwitch is one Port row with several Interface rows. A LACP bond has
// lacp=active and bond_mode=balance-tcp; a static one bond_mode=active-backup and lacp=off;
// other_config:lacp-time is fast or slow. Making a bond moves the members' Interface rows (with
// whatever else is set on them) from their own Port rows to the bond's; removing it gives each
// Interface back a Port of its name, in the idle VLAN.

const (
	bondBalanceTCP   = "balance-tcp"
	bondActiveBackup = "active-backup"
	lacpActive       = "active"
	lacpOff          = "off"
	lacpTimeKey      = "lacp-time"
)

// isBond says whether a Port row is a bond rather than a port of one interface.
func isBond(r portRow) bool {
	return len(r.Interfaces) > 1 || r.BondMode != nil || (r.LACP != nil && *r.LACP != lacpOff)
}

// observedLAG reads a bond's Port row (members: its interfaces' names) as the driver contract
// describes a LAG.
func observedLAG(r portRow, members []string) fabric.LAG {
	l := fabric.LAG{Name: r.Name, Members: sortedStrings(members), Port: observed(r)}
	l.LACP = r.LACP != nil && *r.LACP != lacpOff
	l.FastRate = l.LACP && r.OtherConfig[lacpTimeKey] == "fast"
	return l
}

// bondColumns are the Port columns a bond is made of, as ensure-lag asks.
func bondColumns(l fabric.LAG) ovsdb.Row {
	row := vlanColumns(desired(fabric.Change{Op: portOp(l.Port), Port: l.Port}))
	mode, lacp := bondActiveBackup, lacpOff
	rate := "slow"
	if l.LACP {
		mode, lacp = bondBalanceTCP, lacpActive
		if l.FastRate {
			rate = "fast"
		}
	}
	row["bond_mode"] = mode
	row["lacp"] = lacp
	row["other_config"] = ovsdb.OvsMap{GoMap: map[any]any{lacpTimeKey: rate}}
	return row
}

func portOp(p fabric.Port) fabric.Op {
	if p.Mode == fabric.ModeTrunk {
		return fabric.OpTrunkPort
	}
	return fabric.OpAccessPort
}

// vlanColumns writes a vlanConfig as Port columns (an empty set for an unset one).
func vlanColumns(c vlanConfig) ovsdb.Row {
	row := ovsdb.Row{"tag": ovsdb.OvsSet{GoSet: []any{}}, "vlan_mode": ovsdb.OvsSet{GoSet: []any{}}}
	if c.Tag != nil {
		row["tag"] = *c.Tag
	}
	if c.VLANMode != nil {
		row["vlan_mode"] = *c.VLANMode
	}
	trunks := make([]any, 0, len(c.Trunks))
	for _, v := range c.Trunks {
		trunks = append(trunks, v)
	}
	row["trunks"] = ovsdb.OvsSet{GoSet: trunks}
	return row
}

// lagView is the switch as the batch's bond changes leave it, change after change: the rows
// read once, then what the operations built so far do to them.
type lagView struct {
	ports      map[string]portRow // by name
	bridgeOf   map[string]string  // port UUID (or uuid-name) -> bridge UUID
	ifaceUUID  map[string]string  // interface name -> UUID
	ifaceName  map[string]string  // interface UUID -> name
	portOf     map[string]string  // interface UUID -> port name
	bridgeName map[string]string  // bridge UUID -> name
	// ifaces are the Interface rows by name, as read (the bond changes do not touch them).
	ifaces map[string]interfaceRow
	named  int
}

// readLAGView reads the bridges, ports and interfaces in one transaction.
func (s *Session) readLAGView(ctx context.Context) (*lagView, error) {
	ops := []ovsdb.Operation{
		{Op: ovsdb.OperationSelect, Table: tableBridge, Columns: []string{"_uuid", "name", "ports"}},
		{Op: ovsdb.OperationSelect, Table: tablePort, Columns: portColumns},
		{Op: ovsdb.OperationSelect, Table: tableInterface, Columns: interfaceColumns},
	}
	results, err := s.transact(ctx, ops)
	if err != nil {
		return nil, err
	}
	var bridges []bridgeRow
	var ports []portRow
	var ifaces []interfaceRow
	if err := s.decode(tableBridge, results[0].Rows, &bridges); err != nil {
		return nil, err
	}
	if err := s.decode(tablePort, results[1].Rows, &ports); err != nil {
		return nil, err
	}
	if err := s.decode(tableInterface, results[2].Rows, &ifaces); err != nil {
		return nil, err
	}
	v := &lagView{ports: map[string]portRow{}, bridgeOf: map[string]string{}, ifaceUUID: map[string]string{},
		ifaceName: map[string]string{}, portOf: map[string]string{}, bridgeName: map[string]string{}, ifaces: map[string]interfaceRow{}}
	for _, b := range bridges {
		v.bridgeName[b.UUID] = b.Name
		for _, p := range b.Ports {
			v.bridgeOf[p] = b.UUID
		}
	}
	for _, p := range ports {
		v.ports[p.Name] = p
		for _, i := range p.Interfaces {
			v.portOf[i] = p.Name
		}
	}
	for _, i := range ifaces {
		v.ifaceUUID[i.Name], v.ifaceName[i.UUID] = i.UUID, i.Name
		v.ifaces[i.Name] = i
	}
	return v, nil
}

// lagOps are the operations of the batch's ensure-lag and remove-lag changes, in order, for the
// one transaction Apply sends. A bond already as asked gives none.
func (s *Session) lagOps(ctx context.Context, batch fabric.Batch, v *lagView) ([]ovsdb.Operation, error) {
	if !slices.ContainsFunc(batch, func(c fabric.Change) bool { return c.Op == fabric.OpEnsureLAG || c.Op == fabric.OpRemoveLAG }) {
		return nil, nil
	}
	if v == nil {
		var err error
		if v, err = s.readLAGView(ctx); err != nil {
			return nil, err
		}
	}
	var err error
	var ops []ovsdb.Operation
	for i, c := range batch {
		var more []ovsdb.Operation
		switch c.Op {
		case fabric.OpEnsureLAG:
			more, err = s.ensureLAG(v, c.LAG)
		case fabric.OpRemoveLAG:
			more, err = s.removeLAG(v, c.LAG)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("switch %s: change %d (%s): %w; nothing was changed", s.switchName, i, c, err)
		}
		ops = append(ops, more...)
	}
	return ops, nil
}

func (s *Session) ensureLAG(v *lagView, l fabric.LAG) ([]ovsdb.Operation, error) {
	members := make([]string, 0, len(l.Members))
	for _, m := range sortedStrings(l.Members) {
		u, ok := v.ifaceUUID[m]
		if !ok {
			return nil, fmt.Errorf("member %s is not an interface of the switch", m)
		}
		members = append(members, u)
	}
	cur, exists := v.ports[l.Name]
	if exists && slices.Equal(sortedStrings(cur.Interfaces), sortedStrings(members)) {
		want := bondColumns(l)
		if observedLAGEqual(cur, v, l) {
			return nil, nil
		}
		return []ovsdb.Operation{{Op: ovsdb.OperationUpdate, Table: tablePort, Row: want,
			Where: []ovsdb.Condition{ovsdb.NewCondition("_uuid", ovsdb.ConditionEqual, ovsdb.UUID{GoUUID: cur.UUID})}}}, nil
	}
	// The ports the members are in now (their own, or an older bond of this name) go.
	owners := []string{}
	if exists {
		owners = append(owners, l.Name)
	}
	for _, u := range members {
		if p, ok := v.portOf[u]; ok && !slices.Contains(owners, p) {
			owners = append(owners, p)
		}
	}
	bridge := ""
	var ops []ovsdb.Operation
	for _, name := range owners {
		p := v.ports[name]
		for _, u := range p.Interfaces {
			if name != l.Name && !slices.Contains(members, u) {
				return nil, fmt.Errorf("interface %s is in port %s with interfaces outside the bond (a bond metalwire did not make)", v.ifaceName[u], name)
			}
		}
		br := v.bridgeOf[p.UUID]
		if s.bridge != "" && v.bridgeName[br] != s.bridge {
			return nil, fmt.Errorf("port %s is not on %s", name, s.where())
		}
		if bridge != "" && br != bridge {
			return nil, fmt.Errorf("the members are on different bridges (%s, %s)", v.bridgeName[bridge], v.bridgeName[br])
		}
		bridge = br
		ops = append(ops, v.dropPort(name)...)
	}
	if bridge == "" {
		return nil, fmt.Errorf("no member of bond %s is on a bridge", l.Name)
	}
	row := bondColumns(l)
	row["name"] = l.Name
	row["interfaces"] = uuidSet(members)
	ops = append(ops, v.addPort(bridge, portRow{Name: l.Name, Interfaces: members}, row)...)
	return ops, nil
}

// observedLAGEqual says whether the bond's row already reads as l asks.
func observedLAGEqual(cur portRow, v *lagView, l fabric.LAG) bool {
	names := make([]string, 0, len(cur.Interfaces))
	for _, u := range cur.Interfaces {
		names = append(names, v.ifaceName[u])
	}
	have := observedLAG(cur, names)
	have.Port.Down = l.Port.Down // the members' state is OpenFlow's (portstate.go), not the row's
	wantMode := bondActiveBackup
	if l.LACP {
		wantMode = bondBalanceTCP
	}
	return fabric.SameLAG(have, fabric.LAG{Name: l.Name, Members: l.Members, LACP: l.LACP, FastRate: l.FastRate, Port: l.Port}) &&
		cur.BondMode != nil && *cur.BondMode == wantMode && cur.OtherConfig[lacpTimeKey] != ""
}

func (s *Session) removeLAG(v *lagView, l fabric.LAG) ([]ovsdb.Operation, error) {
	cur, exists := v.ports[l.Name]
	if !exists {
		return nil, nil // gone already
	}
	br := v.bridgeOf[cur.UUID]
	if s.bridge != "" && v.bridgeName[br] != s.bridge {
		return nil, fmt.Errorf("bond %s is not on %s", l.Name, s.where())
	}
	ops := v.dropPort(l.Name)
	for _, u := range cur.Interfaces {
		name := v.ifaceName[u]
		row := vlanColumns(desired(fabric.Change{Op: fabric.OpResetPort, Port: fabric.Port{Name: name, VLAN: l.Port.VLAN}}))
		row["name"] = name
		row["interfaces"] = uuidSet([]string{u})
		ops = append(ops, v.addPort(br, portRow{Name: name, Interfaces: []string{u}}, row)...)
	}
	return ops, nil
}

// dropPort takes a port off its bridge and deletes it; its interfaces live on only if another
// port of the same transaction takes them.
func (v *lagView) dropPort(name string) []ovsdb.Operation {
	p := v.ports[name]
	delete(v.ports, name)
	for _, u := range p.Interfaces {
		if v.portOf[u] == name {
			delete(v.portOf, u)
		}
	}
	ref := ovsdb.UUID{GoUUID: p.UUID}
	return []ovsdb.Operation{
		{Op: ovsdb.OperationMutate, Table: tableBridge,
			Where:     []ovsdb.Condition{ovsdb.NewCondition("_uuid", ovsdb.ConditionEqual, ovsdb.UUID{GoUUID: v.bridgeOf[p.UUID]})},
			Mutations: []ovsdb.Mutation{*ovsdb.NewMutation("ports", ovsdb.MutateOperationDelete, ovsdb.OvsSet{GoSet: []any{ref}})}},
		{Op: ovsdb.OperationDelete, Table: tablePort, Where: []ovsdb.Condition{ovsdb.NewCondition("_uuid", ovsdb.ConditionEqual, ref)}},
	}
}

// addPort inserts a Port row and puts it on the bridge.
func (v *lagView) addPort(bridge string, p portRow, row ovsdb.Row) []ovsdb.Operation {
	v.named++
	p.UUID = fmt.Sprintf("mwport%d", v.named)
	v.ports[p.Name] = p
	v.bridgeOf[p.UUID] = bridge
	for _, u := range p.Interfaces {
		v.portOf[u] = p.Name
	}
	return []ovsdb.Operation{
		{Op: ovsdb.OperationInsert, Table: tablePort, Row: row, UUIDName: p.UUID},
		{Op: ovsdb.OperationMutate, Table: tableBridge,
			Where:     []ovsdb.Condition{ovsdb.NewCondition("_uuid", ovsdb.ConditionEqual, ovsdb.UUID{GoUUID: bridge})},
			Mutations: []ovsdb.Mutation{*ovsdb.NewMutation("ports", ovsdb.MutateOperationInsert, ovsdb.OvsSet{GoSet: []any{ovsdb.UUID{GoUUID: p.UUID}}})}},
	}
}

// lagsOf are the bonds among the named ports of the view, with their members' names, and down
// when every member is.
func (s *Session) lagsOf(v *lagView, ports map[string]portRow, names []string) map[string]fabric.LAG {
	out := map[string]fabric.LAG{}
	for _, n := range names {
		b, ok := ports[n]
		if !ok || !isBond(b) {
			continue
		}
		members := make([]string, 0, len(b.Interfaces))
		allDown := len(b.Interfaces) > 0
		for _, u := range b.Interfaces {
			name := v.ifaceName[u]
			members = append(members, name)
			allDown = allDown && s.portDown(v.ifaces[name])
		}
		l := observedLAG(b, members)
		// A bond is down when every member is: one member up still carries traffic.
		l.Port.Down = allDown
		out[b.Name] = l
	}
	return out
}

func uuidSet(uuids []string) ovsdb.OvsSet {
	set := make([]any, 0, len(uuids))
	for _, u := range uuids {
		set = append(set, ovsdb.UUID{GoUUID: u})
	}
	return ovsdb.OvsSet{GoSet: set}
}

func sortedStrings(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// commitLAGs sends a batch's bond operations alone (no port of the batch needs an update).
func (s *Session) commitLAGs(ctx context.Context, ops []ovsdb.Operation) error {
	if len(ops) == 0 {
		return nil
	}
	sent := s.withCfgBump(ops)
	results, err := s.client.Transact(ctx, sent...)
	if err != nil {
		s.broken = true
		return fmt.Errorf("switch %s: OVSDB transaction of %d bond operations: %w", s.switchName, len(ops), err)
	}
	if _, err := ovsdb.CheckOperationResults(results, sent); err != nil {
		return fmt.Errorf("switch %s: OVSDB refused the transaction (nothing was changed): %w", s.switchName, err)
	}
	s.changes++
	return s.noteCfg(results)
}
