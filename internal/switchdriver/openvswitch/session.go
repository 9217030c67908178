package openvswitch

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ovn-org/libovsdb/mapper"
	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/metalwire/metalwire/internal/switchdriver/openflow"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// Session is one batch's use of an OVSDB connection to a switch. It reads with select
// operations rather than a monitor, so what it reads is what the server holds at that moment,
// also right after Apply, whether the connection is new or kept from an earlier session.
type Session struct {
	client     *ovsdbConn
	switchName string
	bridge     string
	// release keeps the connection for the next session (nil: Close closes it).
	release func(*ovsdbConn)
	// redial opens a new connection; set while the session runs on a kept connection that has
	// not answered yet, which the server may have closed since the last session.
	redial func(context.Context) (*ovsdbConn, error)
	// broken is set when a call failed below OVSDB (a lost connection, a timeout): the
	// connection is closed, not kept.
	broken bool
	// changes counts the transactions that changed something (the idempotence measure).
	changes int
	// openFlow is the bridge's OpenFlow remote for ACL flows and port state ("" when none can be
	// known: noOpenFlow says why); of is its connection, dialled on first use.
	openFlow   string
	noOpenFlow error
	of         *openflow.Conn
	// ofConns keeps the OpenFlow connection for the next session (nil: Close closes it);
	// ofUnproven says of was kept from an earlier session and has not answered in this one.
	ofConns    *conns[ofConn]
	ofUnproven bool
	// bundles and portMods count the OpenFlow bundles and port-mods the switch applied.
	bundles, portMods int
	// flows are metalwire's flows as Read last found them, until a bundle changes them: Apply
	// of the same pass plans from them instead of reading every flow of the switch again.
	flows []fabric.Flow
	// read is the switch's bridges, ports and interfaces as Read found them, until the next
	// Apply: that Apply plans its bonds, MTUs and port states from them instead of reading the
	// tables again (decoding them is most of what a pass costs the manager).
	read *lagView
	// cfgWanted says Apply's transaction raises next_cfg (withCfgBump); cfg is what it read
	// back, for waitVswitchd.
	cfgWanted bool
	cfg       *openvSwitchRow
}

var _ fabric.Session = &Session{}

// Changes is the number of OVSDB transactions, OpenFlow bundles and OpenFlow port-mods this
// session sent that change the switch. An empty batch, or one the switch already matches, sends
// none.
func (s *Session) Changes() int { return s.changes + s.bundles + s.portMods }

// Close ends the session: the connection is kept for the next one when the driver keeps
// connections and nothing failed on it, else closed.
func (s *Session) Close() error {
	if s.of != nil {
		if s.ofConns != nil && s.of.Usable() {
			s.ofConns.put(s.openFlow, ofConn{s.of})
		} else {
			_ = s.of.Close()
		}
		s.of = nil
	}
	if s.client == nil {
		return nil
	}
	if s.release != nil && !s.broken {
		s.release(s.client)
	} else {
		s.client.Close()
	}
	s.client = nil
	return nil
}

// Info reads ovs_version from the Open_vSwitch table (ovs-ctl sets it when the switch starts),
// falling back to the database schema's version.
func (s *Session) Info(ctx context.Context) (fabric.Info, error) {
	var rows []openvSwitchRow
	if err := s.selectRows(ctx, tableOpenvSwitch, []string{"ovs_version"}, &rows); err != nil {
		return fabric.Info{}, err
	}
	if len(rows) > 0 && rows[0].OVSVersion != nil && *rows[0].OVSVersion != "" {
		return fabric.Info{Version: "Open vSwitch " + *rows[0].OVSVersion}, nil
	}
	return fabric.Info{Version: "Open vSwitch (schema " + s.client.Schema().Version + ")"}, nil
}

// interfaceColumns are the Interface columns the driver reads.
var interfaceColumns = []string{"_uuid", "name", "mtu_request", "admin_state"}

// mtuOps are the updates of the interfaces whose mtu_request differs from what the batch's
// port changes ask (a reset clears it).
func (s *Session) mtuOps(ctx context.Context, v *lagView, order []string, mtus map[string]int) ([]ovsdb.Operation, error) {
	ifaces, err := s.interfacesIn(ctx, v, order)
	if err != nil {
		return nil, err
	}
	m := mapper.NewMapper(s.client.Schema())
	table := s.client.Schema().Table(tableInterface)
	var ops []ovsdb.Operation
	for _, n := range order {
		cur, ok := ifaces[n]
		if !ok {
			continue // a port without an interface of its name: its MTU is not ours to set
		}
		want := mtus[n]
		if (cur.MTURequest == nil && want == 0) || (cur.MTURequest != nil && *cur.MTURequest == want) {
			continue
		}
		row := interfaceRow{}
		if want > 0 {
			row.MTURequest = ptr(want)
		}
		info, err := mapper.NewInfo(tableInterface, table, &row)
		if err != nil {
			return nil, fmt.Errorf("switch %s: %w", s.switchName, err)
		}
		data, err := m.NewRow(info, &row.MTURequest)
		if err != nil {
			return nil, fmt.Errorf("switch %s: interface %s: %w", s.switchName, n, err)
		}
		if want == 0 {
			data["mtu_request"] = ovsdb.OvsSet{GoSet: []any{}}
		}
		ops = append(ops, ovsdb.Operation{
			Op: ovsdb.OperationUpdate, Table: tableInterface, Row: data,
			Where: []ovsdb.Condition{ovsdb.NewCondition("_uuid", ovsdb.ConditionEqual, ovsdb.UUID{GoUUID: cur.UUID})},
		})
	}
	return ops, nil
}

// Apply checks every change, sends one OVSDB transaction for the ports and bonds whose columns
// differ, then, through the bridge's OpenFlow endpoint, one bundle for the batch's access lists
// and a port-mod for each port whose administrative state differs (see openflow.go). Nothing is
// sent when the switch already matches, and no OpenFlow connection is opened for a batch that
// changes no list and no port's state.
func (s *Session) Apply(ctx context.Context, batch fabric.Batch) error {
	for i, c := range batch {
		if err := check(i, c); err != nil {
			return fmt.Errorf("switch %s: %w", s.switchName, err)
		}
	}
	// The switch as this pass's Read found it, once: what Apply sends changes it.
	v := s.read
	s.read = nil
	downs, err := s.adminChanges(ctx, batch, v)
	if err != nil {
		return err
	}
	acls := aclChanges(batch)
	if (len(acls) > 0 || len(downs) > 0) && s.openFlow == "" {
		return s.noOpenFlow
	}
	// A change the flows or port-mods name ports after must be applied by ovs-vswitchd first:
	// the transaction asks it to say when (withCfgBump).
	s.cfgWanted, s.cfg = len(acls) > 0 || len(downs) > 0, nil
	defer func() { s.cfgWanted, s.cfg = false, nil }()
	before := s.changes
	if err := s.applyOVSDB(ctx, batch, v); err != nil {
		return err
	}
	if len(acls) == 0 && len(downs) == 0 {
		return nil
	}
	if s.changes > before {
		// The flows name ports, and port-mods address them, as ovs-vswitchd has them: wait until
		// it has applied the transaction (a bond's members moved, a port re-made).
		if err := s.waitVswitchd(ctx); err != nil {
			return err
		}
	}
	return s.applyOpenFlow(ctx, acls, downs)
}

// applyOVSDB reads the ports the batch names and sends one transaction that updates the ports
// whose tag, trunks or vlan_mode differ, and the bonds made or undone. Nothing is sent when none
// differ.
func (s *Session) applyOVSDB(ctx context.Context, batch fabric.Batch, v *lagView) error {
	want := map[string]vlanConfig{}
	mtus := map[string]int{}
	order := []string{}
	for _, c := range batch {
		switch c.Op {
		case fabric.OpAccessPort, fabric.OpTrunkPort, fabric.OpResetPort:
			if _, seen := want[c.Port.Name]; !seen {
				order = append(order, c.Port.Name)
			}
			want[c.Port.Name] = desired(c) // a later change to a port wins, as on a CLI
			mtus[c.Port.Name] = c.Port.MTU
			if c.Op == fabric.OpResetPort {
				mtus[c.Port.Name] = 0
			}
		}
	}
	lagOps, err := s.lagOps(ctx, batch, v)
	if err != nil {
		return err
	}
	if len(want) == 0 {
		// VLANs exist only as port tags on Open vSwitch: only bonds may have something to send.
		return s.commitLAGs(ctx, lagOps)
	}
	ports, err := s.portsNamed(ctx, order)
	if err != nil {
		return err
	}
	m := mapper.NewMapper(s.client.Schema())
	table := s.client.Schema().Table(tablePort)
	var ops []ovsdb.Operation
	var updated []string
	for _, n := range order {
		cur := ports[n]
		w := want[n]
		if (vlanConfig{Tag: cur.Tag, Trunks: cur.Trunks, VLANMode: cur.VLANMode}).equal(w) {
			continue
		}
		row := portRow{Tag: w.Tag, Trunks: w.Trunks, VLANMode: w.VLANMode}
		if row.Trunks == nil {
			row.Trunks = []int{}
		}
		info, err := mapper.NewInfo(tablePort, table, &row)
		if err != nil {
			return fmt.Errorf("switch %s: %w", s.switchName, err)
		}
		data, err := m.NewRow(info, &row.Tag, &row.Trunks, &row.VLANMode)
		if err != nil {
			return fmt.Errorf("switch %s: port %s: %w", s.switchName, n, err)
		}
		ops = append(ops, ovsdb.Operation{
			Op:    ovsdb.OperationUpdate,
			Table: tablePort,
			Row:   data,
			Where: []ovsdb.Condition{ovsdb.NewCondition("_uuid", ovsdb.ConditionEqual, ovsdb.UUID{GoUUID: cur.UUID})},
		})
		updated = append(updated, n)
	}
	mtuUpdates, err := s.mtuOps(ctx, v, order, mtus)
	if err != nil {
		return err
	}
	portUpdates := len(ops)
	ops = append(ops, mtuUpdates...)
	if len(ops) == 0 && len(lagOps) > 0 {
		return s.commitLAGs(ctx, lagOps)
	}
	if len(ops) == 0 {
		// Nothing to write; still refuse a batch naming a port of another bridge, as a write would.
		return s.checkOnBridge(ctx, order, ports)
	}
	// The ports must still be on the bridge when the updates land: the wait fails the whole
	// transaction otherwise, and nothing is changed.
	guard := s.onBridgeOp(ports, ovsdb.OperationWait)
	// Bonds first: a port they free is updated after.
	ops = append(slices.Clone(lagOps), ops...)
	if guard != nil {
		ops = append([]ovsdb.Operation{*guard}, ops...)
	}
	sent := s.withCfgBump(ops)
	results, err := s.client.Transact(ctx, sent...)
	if err != nil {
		s.broken = true
		return fmt.Errorf("switch %s: OVSDB transaction of %d port updates: %w", s.switchName, len(ops), err)
	}
	if _, err := ovsdb.CheckOperationResults(results, sent); err != nil {
		if guard != nil && len(results) > 0 && results[0].Error != "" {
			if notOn := s.notOnBridge(ctx, order); notOn != nil {
				return notOn
			}
		}
		return fmt.Errorf("switch %s: OVSDB refused the transaction (nothing was changed): %w", s.switchName, err)
	}
	updates := results[len(lagOps):len(ops)]
	if guard != nil {
		updates = updates[1:]
	}
	for i, r := range updates[:portUpdates] {
		if r.Count != 1 {
			return fmt.Errorf("switch %s: port %s was removed while being configured (update matched %d rows)", s.switchName, updated[i], r.Count)
		}
	}
	s.changes++
	return s.noteCfg(results)
}

// portColumns are the Port columns the driver reads: the row's id, its name and VLAN setting.
var portColumns = []string{"_uuid", "name", "tag", "trunks", "vlan_mode", "interfaces", "bond_mode", "lacp", "other_config"}

// portsNamed reads, in one transaction, only the Port rows of the given names (a select by the
// table's unique name index each) and refuses names the switch lacks. Whether they are on the
// managed bridge is checked by the caller (onBridgeOp), so the bridge's whole port list is not
// read on every batch.
func (s *Session) portsNamed(ctx context.Context, names []string) (map[string]portRow, error) {
	ops := selectsByName(tablePort, portColumns, names)
	results, err := s.transact(ctx, ops)
	if err != nil {
		return nil, err
	}
	ports := make(map[string]portRow, len(names))
	for i := range ops {
		var rows []portRow
		if err := s.decode(tablePort, results[i].Rows, &rows); err != nil {
			return nil, err
		}
		for _, r := range rows {
			ports[r.Name] = r
		}
	}
	var missing []string
	for _, n := range names {
		if _, ok := ports[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		if s.bridge != "" {
			if _, err := s.managedPorts(ctx); err != nil {
				return nil, err // the bridge itself is missing: say that
			}
		}
		return nil, s.missingError(missing)
	}
	return ports, nil
}

// onBridgeOp is an operation on the managed bridge's row that matches only when every one of
// ports is among the bridge's ports (nil when no bridge is named: any bridge will do).
func (s *Session) onBridgeOp(ports map[string]portRow, op string) *ovsdb.Operation {
	if s.bridge == "" {
		return nil
	}
	uuids := make([]any, 0, len(ports))
	for _, r := range ports {
		uuids = append(uuids, ovsdb.UUID{GoUUID: r.UUID})
	}
	o := ovsdb.Operation{Op: op, Table: tableBridge, Columns: []string{"name"}, Where: []ovsdb.Condition{
		ovsdb.NewCondition("name", ovsdb.ConditionEqual, s.bridge),
		ovsdb.NewCondition("ports", ovsdb.ConditionIncludes, ovsdb.OvsSet{GoSet: uuids}),
	}}
	if op == ovsdb.OperationWait {
		o.Until, o.Timeout, o.Rows = "==", ptr(0), []ovsdb.Row{{"name": s.bridge}}
	}
	return &o
}

// checkOnBridge refuses ports that exist but are not on the managed bridge.
func (s *Session) checkOnBridge(ctx context.Context, names []string, ports map[string]portRow) error {
	op := s.onBridgeOp(ports, ovsdb.OperationSelect)
	if op == nil {
		return nil
	}
	results, err := s.transact(ctx, []ovsdb.Operation{*op})
	if err != nil {
		return err
	}
	if len(results[0].Rows) == 1 {
		return nil
	}
	if notOn := s.notOnBridge(ctx, names); notOn != nil {
		return notOn
	}
	return nil // they moved back in the meantime
}

// notOnBridge reads the whole bridge to name the ports of names that are not on it (nil when
// all are).
func (s *Session) notOnBridge(ctx context.Context, names []string) error {
	ports, err := s.managedPorts(ctx)
	if err != nil {
		return err
	}
	var missing []string
	for _, n := range names {
		if _, ok := ports[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return s.missingError(missing)
}

func (s *Session) missingError(missing []string) error {
	return fmt.Errorf("switch %s: %s %s not on %s; nothing was changed", s.switchName, plural(len(missing), "port", "ports"), quoteList(missing), s.where())
}

func (s *Session) selectRows(ctx context.Context, table string, columns []string, out any) error {
	results, err := s.transact(ctx, []ovsdb.Operation{{Op: ovsdb.OperationSelect, Table: table, Columns: columns}})
	if err != nil {
		return err
	}
	return s.decode(table, results[0].Rows, out)
}

func (s *Session) transact(ctx context.Context, ops []ovsdb.Operation) ([]ovsdb.OperationResult, error) {
	results, err := s.client.Transact(ctx, ops...)
	if err != nil && s.redial != nil && ctx.Err() == nil {
		// The kept connection was closed by the other end while idle: open a new one and read
		// again (nothing has been written in this session yet).
		c, derr := s.redial(ctx)
		if derr != nil {
			s.broken, s.redial = true, nil
			return nil, derr
		}
		s.client.Close()
		s.client = c
		results, err = s.client.Transact(ctx, ops...)
	}
	s.redial = nil
	if err != nil {
		s.broken = true
		return nil, fmt.Errorf("switch %s: OVSDB read: %w", s.switchName, err)
	}
	if _, err := ovsdb.CheckOperationResults(results, ops); err != nil {
		return nil, fmt.Errorf("switch %s: OVSDB read: %w", s.switchName, err)
	}
	return results, nil
}

// decode reads result rows into a slice of one of the model structs (see rows.go).
func (s *Session) decode(table string, rows []ovsdb.Row, out any) error {
	var err error
	switch out := out.(type) {
	case *[]bridgeRow:
		*out, err = bridgeRowsOf(rows)
	case *[]portRow:
		*out, err = portRowsOf(rows)
	case *[]interfaceRow:
		*out, err = interfaceRowsOf(rows)
	case *[]openvSwitchRow:
		*out, err = openvSwitchRowsOf(rows)
	default:
		err = fmt.Errorf("unexpected %T", out)
	}
	if err != nil {
		return fmt.Errorf("switch %s: reading the %s table: %w", s.switchName, table, err)
	}
	return nil
}

func (s *Session) where() string {
	if s.bridge == "" {
		return "any bridge"
	}
	return "bridge " + s.bridge
}

func quoteList(names []string) string {
	q := slices.Clone(names)
	for i := range q {
		q[i] = fmt.Sprintf("%q", q[i])
	}
	if len(q) > 10 {
		q = append(q[:10], fmt.Sprintf("and %d more", len(names)-10))
	}
	if len(names) == 1 {
		return q[0] + " is"
	}
	return strings.Join(q, ", ") + " are"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
