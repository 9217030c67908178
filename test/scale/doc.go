// Package scale holds metalwire's scale benchmarks: real kube-apiserver and etcd (envtest), the
// real manager binary, and many objects created at once. They take minutes, so `make test` skips
// them; each runs with its own make target (make bench-ipam) and prints what it measured.
package scale
