package hostmatch

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// greedy is the first-come choice: each machine, in order, takes the first free host it accepts.
func greedy(order []string, accepts map[string][]string) int {
	taken := map[string]bool{}
	served := 0
	for _, mc := range order {
		for _, h := range accepts[mc] {
			if !taken[h] {
				taken[h] = true
				served++
				break
			}
		}
	}
	return served
}

// check fails unless got is a matching of accepts: each machine on a host it accepts, no host twice.
func check(t *testing.T, accepts map[string][]string, got map[string]string) {
	t.Helper()
	used := map[string]string{}
	for mc, h := range got {
		if !slices.Contains(accepts[mc], h) {
			t.Fatalf("machine %s was given host %s, which it does not accept (%v)", mc, h, accepts[mc])
		}
		if other, ok := used[h]; ok {
			t.Fatalf("host %s given to both %s and %s", h, other, mc)
		}
		used[h] = mc
	}
}

func assignAll(m *Matcher, order []string) map[string]string {
	for _, mc := range order {
		m.Assign(mc)
	}
	out := map[string]string{}
	for _, mc := range order {
		if h := m.Host(mc); h != "" {
			out[mc] = h
		}
	}
	return out
}

func TestServesWhatGreedyStarves(t *testing.T) {
	// a accepts both hosts and prefers h1; b accepts only h1. First come, a takes h1 and b waits
	// for ever; the matcher moves a to h2.
	accepts := map[string][]string{"a": {"h1", "h2"}, "b": {"h1"}}
	order := []string{"a", "b"}
	if g := greedy(order, accepts); g != 1 {
		t.Fatalf("the example is meant to starve a first-come choice; it served %d", g)
	}
	m := New()
	for _, mc := range order {
		m.Set(mc, accepts[mc])
	}
	got := assignAll(m, order)
	check(t, accepts, got)
	if len(got) != 2 {
		t.Fatalf("served %d machines (%v), want both", len(got), got)
	}
	if got["a"] != "h2" || got["b"] != "h1" {
		t.Fatalf("assignment %v, want a->h2 b->h1", got)
	}
}

func TestLateMachineMovesAnUncommittedOne(t *testing.T) {
	// a is assigned h1 before b exists; b arriving moves a, as long as a's claim is not under way.
	m := New()
	m.Set("a", []string{"h1", "h2"})
	if h := m.Assign("a"); h != "h1" {
		t.Fatalf("a alone got %q, want its first choice h1", h)
	}
	m.Set("b", []string{"h1"})
	if h := m.Assign("b"); h != "h1" {
		t.Fatalf("b got %q, want h1", h)
	}
	if h := m.Host("a"); h != "h2" {
		t.Fatalf("a holds %q after b came, want h2", h)
	}
}

func TestPinnedMachineKeepsItsHost(t *testing.T) {
	m := New()
	m.Set("a", []string{"h1", "h2"})
	m.Assign("a")
	m.Pin("a")
	m.Set("b", []string{"h1"})
	if h := m.Assign("b"); h != "" {
		t.Fatalf("b got %q while a's claim of h1 is under way", h)
	}
	// a's claim failed (the host was taken behind our back): h1 goes away, b is unserved, a moves.
	m.RemoveHost("h1")
	if h := m.Assign("a"); h != "h2" {
		t.Fatalf("a got %q after losing h1, want h2", h)
	}
	if h := m.Assign("b"); h != "" {
		t.Fatalf("b got %q, but its only host is gone", h)
	}
}

func TestClaimedKeepsTheRestMaximum(t *testing.T) {
	accepts := map[string][]string{"a": {"h1", "h2"}, "b": {"h2", "h3"}, "c": {"h3"}}
	m := New()
	for _, mc := range []string{"a", "b", "c"} {
		m.Set(mc, accepts[mc])
	}
	got := assignAll(m, []string{"a", "b", "c"})
	check(t, accepts, got)
	if len(got) != 3 {
		t.Fatalf("served %v, want all three", got)
	}
	m.Claimed("a", got["a"])
	if m.Has("a") || m.Host("b") == "" || m.Host("c") == "" {
		t.Fatalf("after a's claim: b=%q c=%q, a known=%v", m.Host("b"), m.Host("c"), m.Has("a"))
	}
}

func TestNewHostServesAWaitingMachine(t *testing.T) {
	m := New()
	m.Set("a", []string{"h1"})
	m.Set("b", []string{"h1"})
	m.Assign("a")
	if h := m.Assign("b"); h != "" {
		t.Fatalf("b got %q with one host for two machines", h)
	}
	// h2 is registered: b's list grows, and a reconcile of any machine serves it.
	m.Set("b", []string{"h1", "h2"})
	m.Assign("a")
	if h := m.Host("b"); h != "h2" {
		t.Fatalf("b holds %q after h2 appeared, want h2", h)
	}
}

func TestSingleMachineTakesItsFirstChoice(t *testing.T) {
	m := New()
	m.Set("a", []string{"h3", "h1", "h2"})
	if h := m.Assign("a"); h != "h3" {
		t.Fatalf("got %q, want the first of the preference list", h)
	}
}

func TestMaximumMatchingSmall(t *testing.T) {
	accepts := map[string][]string{"a": {"h1", "h2"}, "b": {"h1"}, "c": {"h2"}, "d": {}}
	got := MaximumMatching(accepts)
	check(t, accepts, got)
	if len(got) != 2 {
		t.Fatalf("MaximumMatching served %v, want 2 machines", got)
	}
}

// TestRandomGraphsMatchHopcroftKarp drives the incremental Matcher as the controller does
// (machines arriving one by one, each assigned on arrival, some claims committed along the way)
// and compares the machines served with Hopcroft–Karp on the same graph.
func TestRandomGraphsMatchHopcroftKarp(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		nm, nh := 1+rng.IntN(30), 1+rng.IntN(30)
		accepts := map[string][]string{}
		var order []string
		for i := range nm {
			mc := fmt.Sprintf("m%02d", i)
			order = append(order, mc)
			var hs []string
			for j := range nh {
				if rng.IntN(6) == 0 {
					hs = append(hs, fmt.Sprintf("h%02d", j))
				}
			}
			rng.Shuffle(len(hs), func(a, b int) { hs[a], hs[b] = hs[b], hs[a] })
			accepts[mc] = hs
		}
		want := len(MaximumMatching(accepts))

		m := New()
		committed := map[string]string{}
		taken := map[string]bool{}
		for _, mc := range order {
			// A claimed host is no longer listed as free to later machines.
			m.Set(mc, slices.DeleteFunc(slices.Clone(accepts[mc]), func(h string) bool { return taken[h] }))
			m.Assign(mc)
			// Now and then the machine at hand commits its claim.
			if h := m.Host(mc); h != "" && rng.IntN(3) == 0 {
				committed[mc] = h
				taken[h] = true
				m.Claimed(mc, h)
			}
		}
		for _, mc := range m.Machines() {
			m.Assign(mc)
		}
		got := maps(committed)
		for _, mc := range m.Machines() {
			if h := m.Host(mc); h != "" {
				got[mc] = h
			}
		}
		check(t, accepts, got)
		// Commits fix a host before later machines are known; over what remains (machines not
		// committed, hosts not taken) the result must be a maximum matching.
		rest := map[string][]string{}
		for mc, hs := range accepts {
			if _, ok := committed[mc]; ok {
				continue
			}
			rest[mc] = slices.DeleteFunc(slices.Clone(hs), func(h string) bool { return taken[h] })
		}
		if wantRest := len(MaximumMatching(rest)); len(got)-len(committed) != wantRest {
			t.Fatalf("round %d: served %d after %d commits, a maximum matching of the rest serves %d more", round, len(got), len(committed), wantRest)
		}
		if len(got) > want {
			t.Fatalf("round %d: served %d, more than the maximum %d: the check is wrong", round, len(got), want)
		}
	}
}

func TestRandomGraphsWithoutCommitsAreMaximum(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 200 {
		nm, nh := 1+rng.IntN(40), 1+rng.IntN(40)
		accepts := map[string][]string{}
		m := New()
		for i := range nm {
			mc := fmt.Sprintf("m%02d", i)
			var hs []string
			for j := range nh {
				if rng.IntN(8) == 0 {
					hs = append(hs, fmt.Sprintf("h%02d", j))
				}
			}
			accepts[mc] = hs
			m.Set(mc, hs)
			m.Assign(mc)
		}
		got := map[string]string{}
		for mc := range accepts {
			if h := m.Host(mc); h != "" {
				got[mc] = h
			}
		}
		check(t, accepts, got)
		if want := len(MaximumMatching(accepts)); len(got) != want {
			t.Fatalf("round %d: served %d of a possible %d", round, len(got), want)
		}
	}
}

func maps(in map[string]string) map[string]string {
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

func BenchmarkAssignThousand(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	accepts := map[string][]string{}
	var order []string
	for i := range 1000 {
		mc := fmt.Sprintf("m%04d", i)
		order = append(order, mc)
		group := rng.IntN(10)
		var hs []string
		for j := range 1000 {
			if j%10 == group || j%10 == (group+1)%10 {
				hs = append(hs, fmt.Sprintf("h%04d", j))
			}
		}
		accepts[mc] = hs
	}
	for b.Loop() {
		m := New()
		for _, mc := range order {
			m.Set(mc, accepts[mc])
			m.Assign(mc)
		}
	}
}
