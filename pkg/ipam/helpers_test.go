package ipam

import (
	"net/netip"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// t0 is an arbitrary "now" for tests; the index has no clock of its own.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// runs lists a pool's allocatable addresses in sequential order, as "first-last" spans (or one
// address), so a table can state a pool the way a person reads it.
func runs(p *Pool) []string {
	out := []string{}
	for _, s := range p.segments {
		first, last := u128ToAddr(s.first, p.is4), u128ToAddr(s.last, p.is4)
		if first == last {
			out = append(out, first.String())
		} else {
			out = append(out, first.String()+"-"+last.String())
		}
	}
	return out
}

// enumerate lists every allocatable address of a small pool in sequential order, by walking each
// entry address by address (netip's Next, not the package's arithmetic) and asking Contains.
func enumerate(p *Pool) []netip.Addr {
	var out []netip.Addr
	for _, e := range p.Entries {
		for a := e.First; a.IsValid() && !e.Last.Less(a); a = a.Next() {
			if p.Contains(a) {
				out = append(out, a)
			}
		}
	}
	return out
}

func mustParse(t testing.TB, spec Spec) *Pool {
	t.Helper()
	p, err := Parse(spec)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return p
}

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = addr(s)
	}
	return out
}

func subnet24() Spec { return Spec{Pools: []Range{{Subnet: "10.0.0.0/24"}}} }

func allocateAll(g Gomega, idx *Index, prefix string, n int) []netip.Addr {
	out := make([]netip.Addr, 0, n)
	for i := range n {
		a, err := idx.Allocate(owner(prefix, i), t0)
		g.Expect(err).NotTo(HaveOccurred())
		out = append(out, a)
	}
	return out
}

func owner(prefix string, i int) string {
	return prefix + "-" + strconv.Itoa(i)
}
