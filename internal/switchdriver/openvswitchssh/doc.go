// Package openvswitchssh is the switch driver for networkOS "openvswitch-ssh": Open vSwitch driven
// with ovs-vsctl over SSH, the way OpenStack networking-generic-switch drives it in its CI. It is
// the first command set of the sshcli framework. Every batch is one ovs-vsctl invocation whose
// commands are joined with "--", so Open vSwitch applies them in one database transaction.
package openvswitchssh
