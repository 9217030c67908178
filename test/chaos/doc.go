// Package chaos proves that the data path (Metal3DataClaim -> Metal3Data -> IPClaims, IPAddresses
// and Secrets) survives faults: the manager killed with SIGKILL, kube-apiserver and etcd
// restarted, the leader replica killed, and a scale-up undone at once. Each scenario runs the
// real manager binary against a real API server and ends with one invariant check
// (checkInvariants). `make test` runs a short version of each; `make chaos` the long ones.
package chaos
