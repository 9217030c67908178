// Package networkdevice reconciles NetworkDevices: it is the only part of metalwire that talks to
// switches. For each switch it gathers the ports hosts need (from the status the clusternetwork
// controller writes on NICs), reads the switch back through its driver, applies only the
// difference as one batch, and records in status.switches[] what it configured, so a port it
// never configured is never touched and a port it configured goes back to the idle VLAN.
package networkdevice
