// Package fabric is the pure core of metalwire's switch-port automation. It owns the plain values
// that describe what a switch should carry (VLANs, and per port an access VLAN or a trunk), the
// Driver contract every switch operating system implements, and (as the fabric controller lands)
// the computation of each switch's desired state from ClusterNetworks, NICs and selected hosts,
// the difference between that and what a switch reports, and VLAN allocation from a range.
//
// Drivers keep no state of their own: the controller reads a switch back, compares it with the
// desired state, and hands the driver only the difference as one Batch, applied in one session
// (one SSH login, one OVSDB transaction). Running the controller twice therefore changes nothing
// the second time.
package fabric
