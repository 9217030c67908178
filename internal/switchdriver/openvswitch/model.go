package openvswitch

import "github.com/ovn-org/libovsdb/model"

// The few columns of the Open_vSwitch schema (vswitch.ovsschema) the driver reads and writes.
// libovsdb's model checks these structs, by their ovsdb tags, against the schema the server
// sends when the connection opens (openConn); its mapper turns them into the rows the driver
// writes, and rows.go decodes the rows it reads.

// bridgeRow is a row of the Bridge table.
type bridgeRow struct {
	UUID  string   `ovsdb:"_uuid"`
	Name  string   `ovsdb:"name"`
	Ports []string `ovsdb:"ports"`
}

// portRow is a row of the Port table: its VLAN configuration.
type portRow struct {
	UUID     string  `ovsdb:"_uuid"`
	Name     string  `ovsdb:"name"`
	Tag      *int    `ovsdb:"tag"`
	Trunks   []int   `ovsdb:"trunks"`
	VLANMode *string `ovsdb:"vlan_mode"`
	// Interfaces, bond_mode, lacp and other_config make a bond (a Port of several Interfaces).
	Interfaces  []string          `ovsdb:"interfaces"`
	BondMode    *string           `ovsdb:"bond_mode"`
	LACP        *string           `ovsdb:"lacp"`
	OtherConfig map[string]string `ovsdb:"other_config"`
}

// interfaceRow is a row of the Interface table: the MTU metalwire may ask of it, and the
// administrative state ovs-vswitchd reports (what an OpenFlow port-mod sets). A port that
// metalwire configures has one interface of its own name.
type interfaceRow struct {
	UUID       string  `ovsdb:"_uuid"`
	Name       string  `ovsdb:"name"`
	MTURequest *int    `ovsdb:"mtu_request"`
	AdminState *string `ovsdb:"admin_state"`
}

// openvSwitchRow is the single row of the Open_vSwitch table.
type openvSwitchRow struct {
	UUID       string  `ovsdb:"_uuid"`
	OVSVersion *string `ovsdb:"ovs_version"`
	DBVersion  *string `ovsdb:"db_version"`
	// NextCfg is what clients raise after a change; ovs-vswitchd sets CurCfg to it once the
	// change is applied (how ovs-vsctl waits).
	NextCfg int `ovsdb:"next_cfg"`
	CurCfg  int `ovsdb:"cur_cfg"`
}

const (
	tableBridge      = "Bridge"
	tablePort        = "Port"
	tableInterface   = "Interface"
	tableOpenvSwitch = "Open_vSwitch"
)

func clientModel() (model.ClientDBModel, error) {
	return model.NewClientDBModel(database, map[string]model.Model{
		tableBridge:      &bridgeRow{},
		tablePort:        &portRow{},
		tableInterface:   &interfaceRow{},
		tableOpenvSwitch: &openvSwitchRow{},
	})
}
