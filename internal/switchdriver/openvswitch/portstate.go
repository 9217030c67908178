package openvswitch

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/metalwire/metalwire/internal/switchdriver/openflow"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// A port's administrative state on Open vSwitch is its interface's netdev "up" flag: an OpenFlow
// port-mod of the PORT_DOWN bit sets it (OVSDB cannot), and ovs-vswitchd reports it in the
// Interface's admin_state column, which Read reads with the rest of the row. A bond is down when
// every member is; shutting a bond shuts every member.

// vswitchdTimeout bounds the wait for ovs-vswitchd to apply a transaction or report a state.
const vswitchdTimeout = 30 * time.Second

// adminDown reads an Interface row's administrative state (a row ovs-vswitchd has not reported
// on reads as up).
func adminDown(r interfaceRow) bool { return r.AdminState != nil && *r.AdminState == "down" }

// portDown is a port's state as Read reports it: up on a switch without an OpenFlow endpoint,
// where metalwire cannot change it (a port shut by hand there is not metalwire's to open).
func (s *Session) portDown(r interfaceRow) bool { return s.openFlow != "" && adminDown(r) }

// adminChanges are the interfaces whose administrative state the batch changes, by name, with
// the state asked (true: down). A port change asks Port.Down, a reset up; a bond asks its
// Port.Down of every member, its removal up. Interfaces already so are left out.
func (s *Session) adminChanges(ctx context.Context, batch fabric.Batch, v *lagView) (map[string]bool, error) {
	asked := fabric.AdminStates(batch)
	want := make(map[string]bool, len(asked))
	order := make([]string, 0, len(asked))
	for _, a := range asked {
		want[a.Name] = a.Down
		order = append(order, a.Name)
	}
	if len(order) == 0 {
		return nil, nil
	}
	if s.openFlow == "" {
		// No OpenFlow endpoint: port state is not managed here (Read reports every port up), and
		// only a port asked down is an error, the one that says what to set.
		for _, n := range order {
			if want[n] {
				return nil, s.noOpenFlow
			}
		}
		return nil, nil
	}
	ifaces, err := s.interfacesIn(ctx, v, order)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, n := range order {
		r, ok := ifaces[n]
		if ok && adminDown(r) != want[n] {
			out[n] = want[n]
		}
		if !ok && want[n] {
			return nil, fmt.Errorf("switch %s: cannot shut %q: the switch has no interface of that name; nothing was changed", s.switchName, n)
		}
	}
	return out, nil
}

// applyOpenFlow sends the batch's list changes (one bundle) and port-mods over the bridge's
// OpenFlow connection, then waits until ovs-vswitchd reports each port's new state, so a Read
// right after shows it.
func (s *Session) applyOpenFlow(ctx context.Context, acls []fabric.Change, downs map[string]bool) error {
	if len(acls) > 0 {
		if err := s.applyACLs(ctx, acls); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(downs))
	for n := range downs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := s.ofRead(ctx, func(c *openflow.Conn) error {
			before := c.Changes()
			err := c.SetPortAdmin(ctx, n, downs[n])
			s.portMods += c.Changes() - before
			return err
		}); err != nil {
			return fmt.Errorf("switch %s: %w", s.switchName, err)
		}
	}
	return s.waitAdminStates(ctx, downs)
}

// waitAdminStates waits, in one OVSDB transaction of wait operations, until every interface's
// admin_state reads as asked.
func (s *Session) waitAdminStates(ctx context.Context, downs map[string]bool) error {
	if len(downs) == 0 {
		return nil
	}
	ops := make([]ovsdb.Operation, 0, len(downs))
	for n, down := range downs {
		state := "up"
		if down {
			state = "down"
		}
		ops = append(ops, ovsdb.Operation{Op: ovsdb.OperationWait, Table: tableInterface, Columns: []string{"admin_state"},
			Where: []ovsdb.Condition{ovsdb.NewCondition("name", ovsdb.ConditionEqual, n)},
			Until: "==", Rows: []ovsdb.Row{{"admin_state": state}}, Timeout: ptr(int(vswitchdTimeout / time.Millisecond))})
	}
	if _, err := s.transact(ctx, ops); err != nil {
		return fmt.Errorf("switch %s: the ports' state was sent, but ovs-vswitchd did not report it within %s: %w", s.switchName, vswitchdTimeout, err)
	}
	return nil
}

// A transaction that changes ports a list's flows or a port-mod will then name asks
// ovs-vswitchd to tell when it has applied it: it raises next_cfg in the same transaction (as
// ovs-vsctl does), and waitVswitchd waits until cur_cfg reaches that. Raising it in a
// transaction of its own had ovs-vswitchd reconfigure every bridge twice per batch (its CPU
// and ovsdb-server's are the switch's), and polling cur_cfg added a round trip every 20 ms.

// everyRow is a condition every row of a table meets: libovsdb leaves out an empty where of a
// mutate, which the server refuses, so the Open_vSwitch table's one row is named this way.
var everyRow = []ovsdb.Condition{ovsdb.NewCondition("_uuid", ovsdb.ConditionNotEqual, ovsdb.UUID{GoUUID: "00000000-0000-0000-0000-000000000000"})}

// withCfgBump appends to ops, when the session is to wait for ovs-vswitchd (cfgWanted), the
// raise of next_cfg and a read of next_cfg and cur_cfg after it; noteCfg reads the answer.
func (s *Session) withCfgBump(ops []ovsdb.Operation) []ovsdb.Operation {
	if !s.cfgWanted {
		return ops
	}
	return append(slices.Clone(ops),
		ovsdb.Operation{Op: ovsdb.OperationMutate, Table: tableOpenvSwitch, Where: everyRow,
			Mutations: []ovsdb.Mutation{*ovsdb.NewMutation("next_cfg", ovsdb.MutateOperationAdd, 1)}},
		ovsdb.Operation{Op: ovsdb.OperationSelect, Table: tableOpenvSwitch, Where: everyRow, Columns: []string{"next_cfg", "cur_cfg"}})
}

// noteCfg keeps the next_cfg and cur_cfg a transaction built by withCfgBump read back (its last
// result), for waitVswitchd.
func (s *Session) noteCfg(results []ovsdb.OperationResult) error {
	if !s.cfgWanted || len(results) == 0 {
		return nil
	}
	var rows []openvSwitchRow
	if err := s.decode(tableOpenvSwitch, results[len(results)-1].Rows, &rows); err != nil {
		return err
	}
	if len(rows) != 1 {
		return fmt.Errorf("switch %s: the Open_vSwitch table has %d rows, want 1", s.switchName, len(rows))
	}
	s.cfg = &rows[0]
	return nil
}

// waitVswitchd waits until ovs-vswitchd's cur_cfg reaches the next_cfg the session's change
// raised it to: every transaction before has then been applied to the bridge (ports re-made,
// a bond's members moved), so the flows and port-mods that follow name ports as it has them.
// Each round is one transaction that the server holds until cur_cfg moves (a wait with until
// "!=") and then reads it: no polling.
func (s *Session) waitVswitchd(ctx context.Context) error {
	if s.cfg == nil {
		return nil
	}
	next, cur := s.cfg.NextCfg, s.cfg.CurCfg
	s.cfg = nil
	deadline := time.Now().Add(vswitchdTimeout)
	for cur < next {
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("switch %s: ovs-vswitchd did not apply the configuration within %s (cur_cfg %d, next_cfg %d): is ovs-vswitchd running?", s.switchName, vswitchdTimeout, cur, next)
		}
		ops := []ovsdb.Operation{
			{Op: ovsdb.OperationWait, Table: tableOpenvSwitch, Where: everyRow, Columns: []string{"cur_cfg"},
				Until: "!=", Rows: []ovsdb.Row{{"cur_cfg": cur}}, Timeout: ptr(int(left / time.Millisecond))},
			{Op: ovsdb.OperationSelect, Table: tableOpenvSwitch, Where: everyRow, Columns: []string{"cur_cfg"}},
		}
		results, err := s.client.Transact(ctx, ops...)
		if err != nil {
			s.broken = true
			return fmt.Errorf("switch %s: waiting for ovs-vswitchd to apply the configuration: %w", s.switchName, err)
		}
		if _, err := ovsdb.CheckOperationResults(results, ops); err != nil {
			return fmt.Errorf("switch %s: ovs-vswitchd did not apply the configuration within %s (cur_cfg %d, next_cfg %d): is ovs-vswitchd running? (%w)", s.switchName, vswitchdTimeout, cur, next, err)
		}
		var rows []openvSwitchRow
		if err := s.decode(tableOpenvSwitch, results[1].Rows, &rows); err != nil {
			return err
		}
		if len(rows) != 1 {
			return fmt.Errorf("switch %s: the Open_vSwitch table has %d rows, want 1", s.switchName, len(rows))
		}
		cur = rows[0].CurCfg
	}
	return nil
}
