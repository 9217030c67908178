// Package generateapply is the cluster side of `metalwire generate`: it keeps the address state in a
// ConfigMap, changed only by compare-and-swap on its resourceVersion so that generators run at
// once never hand out one address twice, and applies (or writes) what pkg/generate builds.
package generateapply
