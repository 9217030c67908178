// Package networkdevice reconciles NetworkDevices: it is the only part of metalwire that talks to
// switches. For each switch it gathers the ports hosts need (from the status the clusternetwork
// controller writes on NICs, and from the HostNetworkAttachments of claimed hosts), reads the
// switch back through its driver, reports ports changed at the switch (drift), applies only the
// difference as one batch (or, in dry run, lists it), and records in status.switches[] what it
// configured, so a port it never configured is never touched and a port it configured goes back
// to the idle VLAN. Files: reconciler.go (the pass), credentials.go (Secrets watched by name),
// drift.go, attachments.go (BMO's HostNetworkAttachment), baremetalswitch.go (BMO's
// BareMetalSwitch), watches.go (event mapping).
package networkdevice
