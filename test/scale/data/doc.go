// Package data is the data-templating scale benchmark: N Metal3DataClaims on one
// Metal3DataTemplate with two IP pools, served by the data-templating and IPAM controllers
// against a real kube-apiserver (envtest). It takes minutes, so `make test` skips it; run it
// with `make bench-data`. It prints the time until every Metal3Data is rendered, claims per
// second, and the API writes per claim counted by the API server.
package data
