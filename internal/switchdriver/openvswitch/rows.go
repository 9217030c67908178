package openvswitch

import (
	"fmt"

	"github.com/ovn-org/libovsdb/ovsdb"
)

// Rows as libovsdb hands them over (a column's JSON value decoded: a string, a float64, an
// ovsdb.UUID, or an ovsdb.OvsSet for a set, "optional" columns included) read into the model
// structs directly. libovsdb's mapper would do it by reflection over the schema, row by row,
// which cost more than the read itself for a bridge of a hundred ports; the driver reads only
// these few columns, so it reads them itself and names any value of an unexpected shape.

func portRowsOf(rows []ovsdb.Row) ([]portRow, error) {
	out := make([]portRow, 0, len(rows))
	for _, row := range rows {
		var r portRow
		var err error
		if r.UUID, err = uuidColumn(row, "_uuid"); err != nil {
			return nil, err
		}
		if r.Name, err = stringColumn(row, "name"); err != nil {
			return nil, err
		}
		tags, err := intsColumn(row, "tag")
		if err != nil {
			return nil, err
		}
		if len(tags) > 0 {
			r.Tag = ptr(tags[0])
		}
		if r.Trunks, err = intsColumn(row, "trunks"); err != nil {
			return nil, err
		}
		if r.VLANMode, err = optionalString(row, "vlan_mode"); err != nil {
			return nil, err
		}
		if r.Interfaces, err = uuidsColumn(row, "interfaces"); err != nil {
			return nil, err
		}
		if len(r.Interfaces) == 0 {
			r.Interfaces = nil
		}
		if r.BondMode, err = optionalString(row, "bond_mode"); err != nil {
			return nil, err
		}
		if r.LACP, err = optionalString(row, "lacp"); err != nil {
			return nil, err
		}
		if r.OtherConfig, err = stringMapColumn(row, "other_config"); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func interfaceRowsOf(rows []ovsdb.Row) ([]interfaceRow, error) {
	out := make([]interfaceRow, 0, len(rows))
	for _, row := range rows {
		var r interfaceRow
		var err error
		if r.UUID, err = uuidColumn(row, "_uuid"); err != nil {
			return nil, err
		}
		if r.Name, err = stringColumn(row, "name"); err != nil {
			return nil, err
		}
		mtus, err := intsColumn(row, "mtu_request")
		if err != nil {
			return nil, err
		}
		if len(mtus) > 0 {
			r.MTURequest = ptr(mtus[0])
		}
		if r.AdminState, err = optionalString(row, "admin_state"); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func bridgeRowsOf(rows []ovsdb.Row) ([]bridgeRow, error) {
	out := make([]bridgeRow, 0, len(rows))
	for _, row := range rows {
		var r bridgeRow
		var err error
		if r.UUID, err = uuidColumn(row, "_uuid"); err != nil {
			return nil, err
		}
		if r.Name, err = stringColumn(row, "name"); err != nil {
			return nil, err
		}
		if r.Ports, err = uuidsColumn(row, "ports"); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func openvSwitchRowsOf(rows []ovsdb.Row) ([]openvSwitchRow, error) {
	out := make([]openvSwitchRow, 0, len(rows))
	for _, row := range rows {
		var r openvSwitchRow
		var err error
		if r.OVSVersion, err = optionalString(row, "ovs_version"); err != nil {
			return nil, err
		}
		if r.DBVersion, err = optionalString(row, "db_version"); err != nil {
			return nil, err
		}
		for col, dst := range map[string]*int{"next_cfg": &r.NextCfg, "cur_cfg": &r.CurCfg} {
			n, err := intsColumn(row, col)
			if err != nil {
				return nil, err
			}
			if len(n) > 0 {
				*dst = n[0]
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// elements are a column's values: a set's elements, or the single value written bare (OVSDB
// writes a one-element set as its element). A column the select did not ask for has none.
func elements(row ovsdb.Row, col string) []any {
	v, ok := row[col]
	if !ok || v == nil {
		return nil
	}
	switch v := v.(type) {
	case ovsdb.OvsSet:
		return v.GoSet
	case *ovsdb.OvsSet:
		return v.GoSet
	}
	return []any{v}
}

func badValue(col string, v any) error {
	return fmt.Errorf("column %s holds %v (%T), not what the Open_vSwitch schema says", col, v, v)
}

func stringColumn(row ovsdb.Row, col string) (string, error) {
	s, err := optionalString(row, col)
	if err != nil || s == nil {
		return "", err
	}
	return *s, nil
}

func optionalString(row ovsdb.Row, col string) (*string, error) {
	el := elements(row, col)
	if len(el) == 0 {
		return nil, nil
	}
	s, ok := el[0].(string)
	if !ok || len(el) > 1 {
		return nil, badValue(col, row[col])
	}
	return &s, nil
}

func intsColumn(row ovsdb.Row, col string) ([]int, error) {
	el := elements(row, col)
	if len(el) == 0 {
		return nil, nil
	}
	out := make([]int, 0, len(el))
	for _, e := range el {
		switch n := e.(type) {
		case float64:
			out = append(out, int(n))
		case int:
			out = append(out, n)
		default:
			return nil, badValue(col, row[col])
		}
	}
	return out, nil
}

func uuidColumn(row ovsdb.Row, col string) (string, error) {
	u, err := uuidsColumn(row, col)
	if err != nil || len(u) == 0 {
		return "", err
	}
	return u[0], nil
}

func uuidsColumn(row ovsdb.Row, col string) ([]string, error) {
	el := elements(row, col)
	out := make([]string, 0, len(el))
	for _, e := range el {
		u, ok := e.(ovsdb.UUID)
		if !ok {
			return nil, badValue(col, row[col])
		}
		out = append(out, u.GoUUID)
	}
	return out, nil
}

func stringMapColumn(row ovsdb.Row, col string) (map[string]string, error) {
	v, ok := row[col]
	if !ok || v == nil {
		return nil, nil
	}
	var m ovsdb.OvsMap
	switch v := v.(type) {
	case ovsdb.OvsMap:
		m = v
	case *ovsdb.OvsMap:
		m = *v
	default:
		return nil, badValue(col, v)
	}
	if len(m.GoMap) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(m.GoMap))
	for k, val := range m.GoMap {
		ks, ok1 := k.(string)
		vs, ok2 := val.(string)
		if !ok1 || !ok2 {
			return nil, badValue(col, v)
		}
		out[ks] = vs
	}
	return out, nil
}
