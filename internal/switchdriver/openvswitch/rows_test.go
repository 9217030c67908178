package openvswitch

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ovn-org/libovsdb/ovsdb"
)

// Rows as ovsdb-server sends them (RFC 7047 JSON), decoded by libovsdb, read into the model.
func TestPortRowsOf(t *testing.T) {
	for _, tc := range []struct {
		name, row string
		want      portRow
		err       string
	}{
		{"access port", `{"_uuid":["uuid","u1"],"name":"p1","tag":5,"trunks":["set",[]],"vlan_mode":"access"}`,
			portRow{UUID: "u1", Name: "p1", Tag: ptr(5), VLANMode: ptr("access")}, ""},
		{"trunk of two", `{"_uuid":["uuid","u2"],"name":"p2","tag":["set",[]],"trunks":["set",[20,10]],"vlan_mode":"trunk"}`,
			portRow{UUID: "u2", Name: "p2", Trunks: []int{20, 10}, VLANMode: ptr("trunk")}, ""},
		{"a one-element set written bare", `{"_uuid":["uuid","u3"],"name":"p3","tag":["set",[]],"trunks":30,"vlan_mode":["set",[]]}`,
			portRow{UUID: "u3", Name: "p3", Trunks: []int{30}}, ""},
		{"a bond", `{"_uuid":["uuid","u5"],"name":"lag1","tag":7,"trunks":["set",[]],"vlan_mode":"access","interfaces":["set",[["uuid","i1"],["uuid","i2"]]],"bond_mode":"balance-tcp","lacp":"active","other_config":["map",[["lacp-time","fast"]]]}`,
			portRow{UUID: "u5", Name: "lag1", Tag: ptr(7), VLANMode: ptr("access"), Interfaces: []string{"i1", "i2"}, BondMode: ptr("balance-tcp"), LACP: ptr("active"), OtherConfig: map[string]string{"lacp-time": "fast"}}, ""},
		{"a tag of the wrong type", `{"_uuid":["uuid","u4"],"name":"p4","tag":"x"}`, portRow{}, "column tag holds x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var row ovsdb.Row
			if err := json.Unmarshal([]byte(tc.row), &row); err != nil {
				t.Fatal(err)
			}
			got, err := portRowsOf([]ovsdb.Row{row})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], tc.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestBridgeAndSwitchRowsOf(t *testing.T) {
	var rows []ovsdb.Row
	if err := json.Unmarshal([]byte(`[{"_uuid":["uuid","b1"],"name":"br0","ports":["set",[["uuid","u1"],["uuid","u2"]]]},
		{"_uuid":["uuid","b2"],"name":"br1","ports":["uuid","u3"]}]`), &rows); err != nil {
		t.Fatal(err)
	}
	bridges, err := bridgeRowsOf(rows)
	want := []bridgeRow{{UUID: "b1", Name: "br0", Ports: []string{"u1", "u2"}}, {UUID: "b2", Name: "br1", Ports: []string{"u3"}}}
	if err != nil || !reflect.DeepEqual(bridges, want) {
		t.Fatalf("bridges %+v, %v; want %+v", bridges, err, want)
	}
	var sw []ovsdb.Row
	if err := json.Unmarshal([]byte(`[{"ovs_version":"3.1.0"},{"ovs_version":["set",[]]}]`), &sw); err != nil {
		t.Fatal(err)
	}
	got, err := openvSwitchRowsOf(sw)
	if err != nil || len(got) != 2 || got[0].OVSVersion == nil || *got[0].OVSVersion != "3.1.0" || got[1].OVSVersion != nil {
		t.Fatalf("Open_vSwitch rows %+v, %v; want version 3.1.0, then none", got, err)
	}
}
