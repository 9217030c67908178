// Package data is the data-templating scale benchmark: N Metal3DataClaims on one
// Metal3DataTemplate with two IP pools, served by the image's manager (cmd/manager
// --controllers=infrastructure,ipam, built from this checkout) in a process of its own against
// a real kube-apiserver (envtest). Beside each run it measures the floor: the writes the
// contract requires, made by goroutines with no controller, and the API server's CPU for them.
// It takes minutes, so `make test` skips it; run it with `make bench-data` or `make bench-growth`.
package data
