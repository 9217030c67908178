// Package fabric is the fabric scale benchmark: N hosts (FABRIC_BENCH_HOSTS, default 1,000),
// each with two NICs on FABRIC_BENCH_SWITCHES (default 20) real ovsdb-server processes, join a
// ClusterNetwork of two networks at once through the clusternetwork and networkdevice
// controllers on a real kube-apiserver (envtest). `make test` skips it; run it with
// `make bench-fabric`. It prints the time until every host's state is ready, the OVSDB
// transactions each switch received, and the manager's CPU and peak memory. With
// FABRIC_BENCH_LAG=1 each host's two cards are on one switch and bonded with LACP (one network
// of linkAggregation 2): `FABRIC_BENCH_LAG=1 make bench-fabric`.
package fabric
