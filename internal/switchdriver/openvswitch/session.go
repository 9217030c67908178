package openvswitch

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ovn-org/libovsdb/client"
	"github.com/ovn-org/libovsdb/mapper"
	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// Session is one OVSDB connection to a switch. It reads with select operations rather than a
// monitor, so what it reads is what the server holds at that moment, also right after Apply.
type Session struct {
	client     client.Client
	switchName string
	bridge     string
	// changes counts the transactions that changed something (the idempotence measure).
	changes int
}

var _ fabric.Session = &Session{}

// Changes is the number of transactions this session sent that change the switch. An
// empty batch, or one the switch already matches, sends none.
func (s *Session) Changes() int { return s.changes }

// Close ends the OVSDB connection.
func (s *Session) Close() error {
	s.client.Close()
	return nil
}

// Info reads ovs_version from the Open_vSwitch table (ovs-ctl sets it when the switch starts),
// falling back to the database schema's version.
func (s *Session) Info(ctx context.Context) (fabric.Info, error) {
	var rows []openvSwitchRow
	if err := s.selectRows(ctx, tableOpenvSwitch, nil, &rows); err != nil {
		return fabric.Info{}, err
	}
	if len(rows) > 0 && rows[0].OVSVersion != nil && *rows[0].OVSVersion != "" {
		return fabric.Info{Version: "Open vSwitch " + *rows[0].OVSVersion}, nil
	}
	return fabric.Info{Version: "Open vSwitch (schema " + s.client.Schema().Version + ")"}, nil
}

// Read returns the VLANs the managed bridge's ports carry and the named ports that exist on it.
func (s *Session) Read(ctx context.Context, names []string) (fabric.State, error) {
	ports, err := s.managedPorts(ctx)
	if err != nil {
		return fabric.State{}, err
	}
	st := fabric.State{Ports: map[string]fabric.Port{}}
	all := make([]fabric.Port, 0, len(ports))
	for _, r := range ports {
		all = append(all, observed(r))
	}
	st.VLANs = VLANsCarried(all)
	for _, n := range names {
		if r, ok := ports[n]; ok {
			st.Ports[n] = observed(r)
		}
	}
	return st, nil
}

// Apply checks every change, reads the ports the batch names, and sends one transaction that
// updates the ports whose tag, trunks or vlan_mode differ. Nothing is sent when none differ.
func (s *Session) Apply(ctx context.Context, batch fabric.Batch) error {
	for i, c := range batch {
		if err := check(i, c); err != nil {
			return fmt.Errorf("switch %s: %w", s.switchName, err)
		}
	}
	want := map[string]vlanConfig{}
	order := []string{}
	for _, c := range batch {
		switch c.Op {
		case fabric.OpAccessPort, fabric.OpTrunkPort, fabric.OpResetPort:
			if _, seen := want[c.Port.Name]; !seen {
				order = append(order, c.Port.Name)
			}
			want[c.Port.Name] = desired(c) // a later change to a port wins, as on a CLI
		}
	}
	if len(want) == 0 {
		return nil // VLANs exist only as port tags on Open vSwitch
	}
	ports, err := s.managedPorts(ctx)
	if err != nil {
		return err
	}
	var missing []string
	for _, n := range order {
		if _, ok := ports[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("switch %s: %s %s not on %s; nothing was changed", s.switchName, plural(len(missing), "port", "ports"), quoteList(missing), s.where())
	}
	m := mapper.NewMapper(s.client.Schema())
	table := s.client.Schema().Table(tablePort)
	var ops []ovsdb.Operation
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
	}
	if len(ops) == 0 {
		return nil
	}
	results, err := s.client.Transact(ctx, ops...)
	if err != nil {
		return fmt.Errorf("switch %s: OVSDB transaction of %d port updates: %w", s.switchName, len(ops), err)
	}
	if _, err := ovsdb.CheckOperationResults(results, ops); err != nil {
		return fmt.Errorf("switch %s: OVSDB refused the transaction (nothing was changed): %w", s.switchName, err)
	}
	for i, r := range results[:len(ops)] {
		if r.Count != 1 {
			return fmt.Errorf("switch %s: port %s was removed while being configured (update matched %d rows)", s.switchName, order[i], r.Count)
		}
	}
	s.changes++
	return nil
}

// managedPorts reads, in one transaction, the Bridge and Port rows and returns by name the ports
// of the endpoint's bridge (of every bridge when none is named).
func (s *Session) managedPorts(ctx context.Context) (map[string]portRow, error) {
	var where []ovsdb.Condition
	if s.bridge != "" {
		where = []ovsdb.Condition{ovsdb.NewCondition("name", ovsdb.ConditionEqual, s.bridge)}
	}
	ops := []ovsdb.Operation{
		{Op: ovsdb.OperationSelect, Table: tableBridge, Where: where, Columns: []string{"_uuid", "name", "ports"}},
		{Op: ovsdb.OperationSelect, Table: tablePort, Columns: []string{"_uuid", "name", "tag", "trunks", "vlan_mode"}},
	}
	results, err := s.transact(ctx, ops)
	if err != nil {
		return nil, err
	}
	var bridges []bridgeRow
	if err := s.decode(tableBridge, results[0].Rows, &bridges); err != nil {
		return nil, err
	}
	if s.bridge != "" && len(bridges) == 0 {
		return nil, fmt.Errorf("switch %s: bridge %q does not exist; set bridge to one of the switch's bridges (ovs-vsctl list-br)", s.switchName, s.bridge)
	}
	var rows []portRow
	if err := s.decode(tablePort, results[1].Rows, &rows); err != nil {
		return nil, err
	}
	onBridge := map[string]bool{}
	for _, b := range bridges {
		for _, u := range b.Ports {
			onBridge[u] = true
		}
	}
	ports := map[string]portRow{}
	for _, r := range rows {
		if onBridge[r.UUID] {
			ports[r.Name] = r
		}
	}
	return ports, nil
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
	if err != nil {
		return nil, fmt.Errorf("switch %s: OVSDB read: %w", s.switchName, err)
	}
	if _, err := ovsdb.CheckOperationResults(results, ops); err != nil {
		return nil, fmt.Errorf("switch %s: OVSDB read: %w", s.switchName, err)
	}
	return results, nil
}

// decode maps result rows onto a slice of one of the model structs.
func (s *Session) decode(table string, rows []ovsdb.Row, out any) error {
	m := mapper.NewMapper(s.client.Schema())
	ts := s.client.Schema().Table(table)
	switch out := out.(type) {
	case *[]bridgeRow:
		for i := range rows {
			var r bridgeRow
			if err := decodeRow(m, table, ts, &rows[i], &r); err != nil {
				return err
			}
			*out = append(*out, r)
		}
	case *[]portRow:
		for i := range rows {
			var r portRow
			if err := decodeRow(m, table, ts, &rows[i], &r); err != nil {
				return err
			}
			*out = append(*out, r)
		}
	case *[]openvSwitchRow:
		for i := range rows {
			var r openvSwitchRow
			if err := decodeRow(m, table, ts, &rows[i], &r); err != nil {
				return err
			}
			*out = append(*out, r)
		}
	default:
		return fmt.Errorf("decode %s: unexpected %T", table, out)
	}
	return nil
}

func decodeRow(m mapper.Mapper, table string, ts *ovsdb.TableSchema, row *ovsdb.Row, into any) error {
	info, err := mapper.NewInfo(table, ts, into)
	if err != nil {
		return err
	}
	if err := m.GetRowData(row, info); err != nil {
		return err
	}
	// _uuid is not a schema column, so the mapper leaves it to us.
	if u, ok := (*row)["_uuid"].(ovsdb.UUID); ok {
		return info.SetField("_uuid", u.GoUUID)
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
