package openvswitch

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ovn-org/libovsdb/ovsdb"

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
	c, err := s.conn(ctx)
	if err != nil {
		return err
	}
	if len(acls) > 0 {
		if err := s.applyACLs(ctx, c, acls); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(downs))
	for n := range downs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		before := c.Changes()
		if err := c.SetPortAdmin(ctx, n, downs[n]); err != nil {
			return fmt.Errorf("switch %s: %w", s.switchName, err)
		}
		s.portMods += c.Changes() - before
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

// syncVswitchd raises next_cfg and waits until ovs-vswitchd's cur_cfg reaches it: every
// transaction before has then been applied to the bridge (as ovs-vsctl waits without --no-wait).
func (s *Session) syncVswitchd(ctx context.Context) error {
	// The table's one row. libovsdb leaves out an empty where of a mutate, which the server
	// refuses, so the condition is one every row meets.
	all := []ovsdb.Condition{ovsdb.NewCondition("_uuid", ovsdb.ConditionNotEqual, ovsdb.UUID{GoUUID: "00000000-0000-0000-0000-000000000000"})}
	ops := []ovsdb.Operation{
		{Op: ovsdb.OperationMutate, Table: tableOpenvSwitch, Where: all,
			Mutations: []ovsdb.Mutation{*ovsdb.NewMutation("next_cfg", ovsdb.MutateOperationAdd, 1)}},
		{Op: ovsdb.OperationSelect, Table: tableOpenvSwitch, Where: all, Columns: []string{"next_cfg"}},
	}
	results, err := s.transact(ctx, ops)
	if err != nil {
		return err
	}
	var rows []openvSwitchRow
	if err := s.decode(tableOpenvSwitch, results[1].Rows, &rows); err != nil {
		return err
	}
	if len(rows) != 1 {
		return fmt.Errorf("switch %s: the Open_vSwitch table has %d rows, want 1", s.switchName, len(rows))
	}
	next := rows[0].NextCfg
	deadline := time.Now().Add(vswitchdTimeout)
	for {
		if err := s.selectRows(ctx, tableOpenvSwitch, []string{"cur_cfg"}, &rows); err != nil {
			return err
		}
		cur := 0
		if len(rows) == 1 {
			cur = rows[0].CurCfg
		}
		if cur >= next {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("switch %s: ovs-vswitchd did not apply the configuration within %s (cur_cfg %d, next_cfg %d): is ovs-vswitchd running?", s.switchName, vswitchdTimeout, cur, next)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
