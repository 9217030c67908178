// Package machine benchmarks Metal3Machine association at scale (make bench-machine): N machines
// with overlapping host selectors against N hosts, measured beside its floor, the writes the
// contract requires made by plain goroutines with no controller.
package machine
