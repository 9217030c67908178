// Package openvswitch is the switch driver for networkOS "openvswitch": it configures an Open
// vSwitch's ports through the OVSDB management protocol (RFC 7047), over a tcp:, ssl: or unix:
// remote: libovsdb's wire types and JSON-RPC by cenkalti/rpc2 (rpc.go). VLANs on Open vSwitch
// exist only as port tags, so ensure-vlan and remove-vlan change nothing; a port is set through
// its Port row's tag, trunks and vlan_mode columns, and every Batch is one OVSDB transaction. Each session reads the rows it needs with
// select and writes only the ones whose columns differ; what New's driver keeps between sessions
// is a switch's connection (a socket and the schema, no rows), never a copy of its ports.
//
// Access lists and a port's administrative state are OpenFlow's, which OVSDB cannot write: after
// the batch's OVSDB transaction the session sends one OpenFlow bundle of the batch's list flows
// and a port-mod per port whose state differs, to the bridge's OpenFlow endpoint
// (fabric.Endpoint.OpenFlowRemote, or BR.mgmt beside a unix OVSDB socket; see OpenFlowRemote),
// through the openflow package. A batch that changes neither opens no OpenFlow connection.
package openvswitch
