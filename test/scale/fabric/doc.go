// Package fabric is the fabric scale benchmark: N hosts (FABRIC_BENCH_HOSTS, default 1,000),
// each with two NICs on FABRIC_BENCH_SWITCHES (default 20) real ovsdb-server processes, join a
// ClusterNetwork of two networks at once through the clusternetwork and networkdevice
// controllers on a real kube-apiserver (envtest). `make test` skips it; run it with
// `make bench-fabric`. It prints the time until every host's state is ready, the OVSDB
// transactions each switch received, and the manager's CPU and peak memory. With
// FABRIC_BENCH_LAG=1 each host's two cards are on one switch and bonded with LACP (one network
// of linkAggregation 2): `FABRIC_BENCH_LAG=1 make bench-fabric`. With FABRIC_BENCH_ACL=1 every
// network has a two-rule access list (ssh denied, then all allowed), written as OpenFlow flows:
// each switch also runs an ovs-vswitchd whose ports are dummy interfaces, and the benchmark
// checks every host's flows on its switch with ovs-ofctl. Both at once are issue 25's run:
// `FABRIC_BENCH_LAG=1 FABRIC_BENCH_ACL=1 make bench-fabric`. FABRIC_BENCH_VSWITCHD=1 gives
// every switch its ovs-vswitchd without lists too, so that part 1 is measured on the same
// switches as issue 25's run: the switches' own CPU shares the two cores with the API server
// and the manager.
package fabric
