package ipam

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// The benchmarks fill a /8 one allocation at a time. Each reports ns/alloc and allocs/alloc: if
// the index were linear per allocation (as upstream's scan is), ns/alloc at 100,000 would be ten
// times that at 10,000; a logarithmic index stays within a small factor.

var benchSizes = []int{2_000, 10_000, 100_000}

func benchOwners(n int) []string {
	owners := make([]string, n)
	for i := range owners {
		owners[i] = fmt.Sprintf("cluster-a-worker-%d-ipv4", i)
	}
	return owners
}

// perAlloc reports the cost per allocation of a benchmark whose every op makes n allocations.
// Besides wall time it reports CPU time (getrusage): on a shared machine the wall clock also
// counts the time other processes hold the CPU.
type perAlloc struct {
	b       *testing.B
	n, ops  int
	mallocs uint64
	cpu     time.Duration
}

func startPerAlloc(b *testing.B, n int) *perAlloc {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportAllocs()
	return &perAlloc{b: b, n: n, mallocs: ms.Mallocs, cpu: cpuTime(b)}
}

func (p *perAlloc) done() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	allocs := float64(p.ops * p.n)
	p.b.ReportMetric(float64(p.b.Elapsed().Nanoseconds())/allocs, "ns/alloc")
	p.b.ReportMetric(float64((cpuTime(p.b)-p.cpu).Nanoseconds())/allocs, "cpu-ns/alloc")
	p.b.ReportMetric(float64(ms.Mallocs-p.mallocs)/allocs, "allocs/alloc")
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkFill(b *testing.B) {
	for _, strategy := range []Strategy{Sequential, Random} {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("%s/n=%d", strategy, n), func(b *testing.B) {
				pool := mustParse(b, Spec{Strategy: strategy, Gateway: "10.0.0.1", Pools: []Range{{Subnet: "10.0.0.0/8"}}})
				owners := benchOwners(n)
				m := startPerAlloc(b, n)
				for b.Loop() {
					idx := NewIndex(pool, rand.New(rand.NewPCG(1, 2)))
					for _, o := range owners {
						if _, err := idx.Allocate(o, t0); err != nil {
							b.Fatal(err)
						}
					}
					m.ops++
				}
				m.done()
			})
		}
	}
}

// BenchmarkChurn measures one release and one allocation in a pool that holds n addresses: the
// steady state of a busy cluster.
func BenchmarkChurn(b *testing.B) {
	for _, strategy := range []Strategy{Sequential, Random} {
		for _, n := range benchSizes[1:] {
			b.Run(fmt.Sprintf("%s/n=%d", strategy, n), func(b *testing.B) {
				pool := mustParse(b, Spec{Strategy: strategy, Pools: []Range{{Subnet: "10.0.0.0/8"}}})
				owners := benchOwners(n)
				idx := NewIndex(pool, rand.New(rand.NewPCG(1, 2)))
				held := make([]netip.Addr, n)
				for i, o := range owners {
					held[i], _ = idx.Allocate(o, t0)
				}
				pick := rand.New(rand.NewPCG(3, 4))
				m := startPerAlloc(b, 1)
				for b.Loop() {
					i := pick.IntN(n)
					idx.Release(held[i], t0)
					a, err := idx.Allocate(owners[i], t0)
					if err != nil {
						b.Fatal(err)
					}
					held[i] = a
					m.ops++
				}
				m.done()
			})
		}
	}
}

// BenchmarkFillByScan is the upstream approach for comparison: each allocation walks the range
// from the start and checks a set of used addresses. It is quadratic, so it stops at 10,000.
func BenchmarkFillByScan(b *testing.B) {
	for _, n := range benchSizes[:2] {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			owners := benchOwners(n)
			first := netip.MustParseAddr("10.0.0.1")
			m := startPerAlloc(b, n)
			for b.Loop() {
				used := map[netip.Addr]string{}
				for _, o := range owners {
					a := first
					for ; used[a] != ""; a = a.Next() {
					}
					used[a] = o
				}
				m.ops++
			}
			m.done()
		})
	}
}
