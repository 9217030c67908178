// Package openvswitchssh is the switch driver for networkOS "openvswitch-ssh": Open vSwitch driven
// with ovs-vsctl over SSH, the way OpenStack networking-generic-switch drives it in its CI. It is
// the first command set of the sshcli framework. Every batch is one ovs-vsctl invocation whose
// commands are joined with "--", so Open vSwitch applies them in one database transaction;
// access lists and port state follow with ovs-ofctl in the same SSH session (one --bundle of
// every list's flows, then mod-port per port whose state differs; see openflow.go).
package openvswitchssh
