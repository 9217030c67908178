// Package fabricssh is the SSH fabric benchmark: N hosts (FABRIC_SSH_BENCH_HOSTS, default 1,000)
// with two NICs each, on FABRIC_SSH_BENCH_SWITCHES (default 20) emulated EOS switches
// (internal/switchtest/vendortest) that answer a login after FABRIC_SSH_BENCH_LOGIN_MS (1,000)
// and each command after FABRIC_SSH_BENCH_COMMAND_MS (20), join a ClusterNetwork at once through
// the image's manager (manager.New, FABRIC_SSH_BENCH_CONCURRENCY switches at once, default 4 as
// --fabric-concurrency) on a real kube-apiserver. The clock starts once the manager's own first
// passes over the switches have ended. It prints the time until every host is ready, logins and
// commands per switch, the manager's CPU and peak memory; then drives the same port changes
// networking-generic-switch's way (each network's VLAN in a session of its own, then one login
// per port change, one change at a time per switch, switches in parallel) on fresh switches as
// the anchor. `make test` skips it; run it with `make bench-fabric-ssh`.
package fabricssh
