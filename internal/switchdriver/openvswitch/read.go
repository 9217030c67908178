package openvswitch

import (
	"context"
	"fmt"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// Read returns the VLANs the managed bridge's ports carry and the named ports that exist on it.
// It reads the bridges, ports and interfaces in one transaction.
func (s *Session) Read(ctx context.Context, names []string) (fabric.State, error) {
	s.read = nil
	v, err := s.readLAGView(ctx)
	if err != nil {
		return fabric.State{}, err
	}
	ports, err := s.bridgePorts(v)
	if err != nil {
		return fabric.State{}, err
	}
	st := fabric.State{Ports: map[string]fabric.Port{}}
	all := make([]fabric.Port, 0, len(ports))
	for _, r := range ports {
		all = append(all, observed(r))
	}
	st.VLANs = VLANsCarried(all)
	var present []string
	for _, n := range names {
		if _, ok := ports[n]; ok {
			present = append(present, n)
		}
	}
	if lags := s.lagsOf(v, ports, present); len(lags) > 0 {
		st.LAGs = lags
	}
	for _, n := range present {
		if _, bond := st.LAGs[n]; bond {
			continue
		}
		p := observed(ports[n])
		r, ok := v.ifaces[n]
		if ok && r.MTURequest != nil {
			p.MTU = *r.MTURequest
		}
		p.Down = s.portDown(r)
		st.Ports[n] = p
	}
	if asked := aclNamesAsked(names, ports); len(asked) > 0 {
		if st.ACLs, err = s.readACLs(ctx, asked); err != nil {
			return fabric.State{}, err
		}
	}
	s.read = v
	return st, nil
}

// bridgePorts are the ports of the view on the endpoint's bridge (on every bridge when none is
// named), by name.
func (s *Session) bridgePorts(v *lagView) (map[string]portRow, error) {
	var bridge string
	if s.bridge != "" {
		for uuid, name := range v.bridgeName {
			if name == s.bridge {
				bridge = uuid
			}
		}
		if bridge == "" {
			return nil, fmt.Errorf("switch %s: bridge %q does not exist; set bridge to one of the switch's bridges (ovs-vsctl list-br)", s.switchName, s.bridge)
		}
	}
	ports := map[string]portRow{}
	for name, r := range v.ports {
		if b, ok := v.bridgeOf[r.UUID]; ok && (bridge == "" || b == bridge) {
			ports[name] = r
		}
	}
	return ports, nil
}

// interfacesIn gives the named Interface rows from the view Read took, or, without one, reads
// them.
func (s *Session) interfacesIn(ctx context.Context, v *lagView, names []string) (map[string]interfaceRow, error) {
	if v == nil {
		return s.interfacesNamed(ctx, names)
	}
	out := make(map[string]interfaceRow, len(names))
	for _, n := range names {
		if r, ok := v.ifaces[n]; ok {
			out[n] = r
		}
	}
	return out, nil
}

// interfacesNamed reads, in one transaction, the Interface rows of the given names.
func (s *Session) interfacesNamed(ctx context.Context, names []string) (map[string]interfaceRow, error) {
	out := make(map[string]interfaceRow, len(names))
	if len(names) == 0 {
		return out, nil
	}
	ops := selectsByName(tableInterface, interfaceColumns, names)
	results, err := s.transact(ctx, ops)
	if err != nil {
		return nil, err
	}
	for i := range ops {
		var rows []interfaceRow
		if err := s.decode(tableInterface, results[i].Rows, &rows); err != nil {
			return nil, err
		}
		for _, r := range rows {
			out[r.Name] = r
		}
	}
	return out, nil
}

// managedPorts reads the bridges, ports and interfaces and returns by name the ports of the
// endpoint's bridge (of every bridge when none is named).
func (s *Session) managedPorts(ctx context.Context) (map[string]portRow, error) {
	v, err := s.readLAGView(ctx)
	if err != nil {
		return nil, err
	}
	return s.bridgePorts(v)
}

// selectsByName are the selects of a table's rows of the given names, one each, for one
// transaction (a select by the table's unique name index, not a read of the whole table).
func selectsByName(table string, columns, names []string) []ovsdb.Operation {
	ops := make([]ovsdb.Operation, 0, len(names))
	for _, n := range names {
		ops = append(ops, ovsdb.Operation{Op: ovsdb.OperationSelect, Table: table, Columns: columns,
			Where: []ovsdb.Condition{ovsdb.NewCondition("name", ovsdb.ConditionEqual, n)}})
	}
	return ops
}
