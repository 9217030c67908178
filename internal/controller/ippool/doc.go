// Package ippool reconciles IPPools and hands out their addresses: to ipam.metal3.io IPClaims
// and to Cluster API IPAddressClaims whose poolRef names an IPPool.
//
// Work is done per pool, not per claim. A claim event enqueues its pool; the pool reconcile
// takes every pending claim of the pool from the informer cache (field indexes, never a list of
// every object of a kind), allocates each in the pool's in-memory ipam.Index (O(log n)), then
// writes the results with a bounded set of workers. The index is rebuilt from the cache when the
// pool is first seen and kept current from IPAddress events.
//
// Correctness does not rest on the cache: an IPAddress is named after its address, so the API
// server refuses a second object for one address; and the chosen address is recorded on the claim
// with its resourceVersion as a precondition before the IPAddress is created, so one claim never
// gets two addresses either, even with two managers running.
package ippool
