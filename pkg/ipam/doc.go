// Package ipam is the pure core of metalwire's IP address management: it parses an IPPool's
// address sources into a Pool and keeps, per pool, an Index of who holds which address. It imports
// no Kubernetes package; the IPPool controller converts its objects to and from these plain values.
//
// # Pool
//
// Parse resolves spec.pools entries ({start, end, subnet, prefix, gateway, dnsServers}, entry
// values over top-level defaults) into address ranges, then cuts out what is never handed out:
// excludedAddresses (addresses, a-b ranges, CIDRs), every entry's gateway, and the network and
// IPv4 broadcast address of a subnet (none for /31, /32, IPv6 /127, /128). What is left is a list
// of runs, numbered without holes: position 0 is the first address of the first entry, and
// positions follow the entries' order. Sequential allocation hands out the lowest position, so
// the entry order of spec.pools is the order addresses go out, as upstream.
//
// # Index
//
// Upstream metal3 IPAM scans the used addresses for each allocation, which makes filling a pool
// quadratic: 10,000 claims take minutes. The Index keeps the positions that are not free
// (allocated, pinned by preAllocations, or cooling after a release) in an order-statistics treap,
// a balanced search tree whose nodes count their subtree. For the i-th smallest taken position t,
// t-i is the number of free positions below t and never decreases along the tree, so one walk from
// the root finds the lowest free position (sequential) or the r-th free position (random, r drawn
// uniformly below the free count) in O(log n) for n taken addresses; insert and delete are
// O(log n) too. Positions are 128-bit, so a /64 (or larger) pool costs the same as a /24: the
// tree stores only taken positions, never free ones. Owners are looked up in hash maps.
//
// Releases with a reuse grace period go to a min-heap by expiry; each call that takes the current
// time first frees what has expired, so no clock or timer lives here.
//
// The benchmarks in bench_test.go fill pools with 2,000 to 100,000 addresses: the cost per
// allocation grows with log n, not n.
package ipam
