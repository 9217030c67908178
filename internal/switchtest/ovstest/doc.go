// Package ovstest runs real Open vSwitch for tests: its own ovsdb-server (a fresh database in a
// temporary directory, on a unix socket and a loopback TCP port), ovs-vswitchd in user space
// (--disable-system, bridges of datapath_type=netdev) in a network namespace of its own, hosts
// in network namespaces cabled to bridge ports by veth pairs, a VLAN-aware host standing in for
// one with 802.1Q (which this kernel lacks), a fleet of databases for benchmarks, and an sshd
// of its own so "the switch" can be driven over SSH.
// Everything a test starts is removed in t.Cleanup, also when the test fails.
//
// A test that needs a tool this machine lacks fails when CI=true and is skipped otherwise
// (`make test-deps` installs Debian's openvswitch-switch and openssh-server).
package ovstest
