// Package fabric is the pure core of metalwire's switch-port automation. It owns the plain values
// that describe what a switch should carry (VLANs, and per port an access VLAN or a trunk), the
// Driver contract every switch operating system implements, the computation of each switch's
// desired state from the ports hosts need (VLANs, bonds, access lists, port state), the
// difference between that and what a switch reports, and VLAN allocation from a range.
//
// What a switch carries is known from the switch, not from the driver: the controller reads a
// switch back, compares it with the desired state, and hands the driver only the difference as
// one Batch, applied in one session (one SSH login, one OVSDB transaction). Running the
// controller twice therefore changes nothing the second time. (A driver may keep connections
// open between sessions, as the OVSDB driver does; never what a switch carries.)
package fabric
