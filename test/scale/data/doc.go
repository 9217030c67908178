// Package data is the data-templating scale benchmark: N Metal3DataClaims on one
// Metal3DataTemplate with two IP pools, served by the IPAM and data-templating controllers in a
// manager process of their own against a real kube-apiserver (envtest). Beside each run it
// measures the floor: the writes the contract requires, made by goroutines with no controller,
// and the API server's CPU for them. It takes minutes, so `make test` skips it; run it with
// `make bench-data`.
package data
