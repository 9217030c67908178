// Package openflow is a small, synchronous OpenFlow 1.5 client for one Open vSwitch bridge: the
// part of the Open vSwitch (OVSDB) driver that writes ACL flows and sets a port's administrative
// state, which the OVSDB protocol cannot do. It is built on antrea.io/libOpenflow's message types.
//
// A Conn talks to one bridge's OpenFlow endpoint, written as Open vSwitch writes its remotes:
// "tcp:HOST:PORT" (a passive controller listener, `ovs-vsctl set-controller BR ptcp:6653`) or
// "unix:PATH" (the bridge's management socket, /var/run/openvswitch/BR.mgmt). It offers OpenFlow
// 1.5 only, answers the switch's echo requests while it waits, matches every reply to its
// request by xid and returns an OpenFlow error as a *SwitchError naming the request, the error
// type and code. A Conn is meant for one batch of work: dial, read, apply, close. It starts no
// goroutine and reads only while a call waits for its reply.
//
// A driver's pass is: Flows(fabric.CookiePrefix, fabric.CookiePrefixMask), Plan against the
// flows it wants (fabric.ACLFlows of each port), one Apply of the plan (nothing when in step),
// and SetPortAdmin per port (which sends nothing when the port is already so); Changes counts
// what was applied.
//
// What it sends:
//   - PortDesc and FlowDesc multipart requests (Ports, Flows), read-only;
//   - one atomic, ordered bundle per Apply: a strict-cookie delete (table all, cookie mask all
//     ones) for each cookie to remove, then an add for each flow of table 0;
//   - a PortMod of the PORT_DOWN bit alone (SetPortAdmin), then a barrier.
//
// What it never touches: flows whose cookie it was not asked to remove (a delete always carries
// the full cookie mask, never a wildcard), any table but 0 when adding, the bridge's other port
// config bits (no-receive, no-forward, no-packet-in), groups, meters, and the bridge's
// configuration in the database. An added flow whose match and priority equal an existing
// flow's replaces it (OpenFlow's rule); metalwire's ACL priorities (30000 down) keep clear of
// the bridge's NORMAL flow at 0.
package openflow
