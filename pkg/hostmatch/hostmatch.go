// Package hostmatch assigns machines to the hosts they accept so that as many machines as
// possible get one: a maximum bipartite matching, kept up to date as machines and hosts come and
// go.
//
// A first-come choice (each machine takes the first free host it accepts) can serve fewer: a
// machine that accepts hosts A and B may take A, the only host another machine accepts. The
// Matcher instead moves not-yet-committed machines along augmenting paths, so that every machine
// a perfect assignment could serve is served. Among the assignments of maximum size it keeps a
// machine on the first host of its preference list whenever no other machine needs that host.
//
// A Matcher is not safe for concurrent use: its owner serializes calls.
package hostmatch

import "slices"

// Matcher holds the machines still waiting for a host, the hosts each accepts (in preference
// order), and a matching between them that is maximum over that graph.
type Matcher struct {
	accepts map[string][]string // machine -> hosts, most preferred first
	hostOf  map[string]string   // machine -> assigned host
	machine map[string]string   // host -> machine assigned to it
	pinned  map[string]bool     // machines whose host must not move (a claim is under way)
	// stale is set when the graph gained an edge that could let an unmatched machine in: a
	// machine's list grew, or a pinned machine was released.
	stale bool
}

// New returns an empty Matcher.
func New() *Matcher {
	return &Matcher{
		accepts: map[string][]string{},
		hostOf:  map[string]string{},
		machine: map[string]string{},
		pinned:  map[string]bool{},
	}
}

// Len is how many machines the Matcher knows.
func (m *Matcher) Len() int { return len(m.accepts) }

// Has says whether the Matcher knows the machine.
func (m *Matcher) Has(machine string) bool {
	_, ok := m.accepts[machine]
	return ok
}

// Machines lists the machines the Matcher knows, in no order.
func (m *Matcher) Machines() []string {
	out := make([]string, 0, len(m.accepts))
	for k := range m.accepts {
		out = append(out, k)
	}
	return out
}

// Set records the hosts a machine accepts now, most preferred first. A machine whose host is no
// longer among them loses it; a pinned machine keeps it regardless.
func (m *Matcher) Set(machine string, hosts []string) {
	old, known := m.accepts[machine]
	hosts = slices.Clone(hosts)
	m.accepts[machine] = hosts
	if h, ok := m.hostOf[machine]; ok && !m.pinned[machine] && !slices.Contains(hosts, h) {
		m.unassign(machine)
	}
	if !known {
		// A new machine can open no augmenting path for another: it can only start one.
		return
	}
	for _, h := range hosts {
		if !slices.Contains(old, h) {
			m.stale = true
			return
		}
	}
}

// Remove forgets a machine (it got a host by other means, or is gone) and frees its host.
func (m *Matcher) Remove(machine string) {
	m.unassign(machine)
	delete(m.accepts, machine)
	delete(m.pinned, machine)
}

// RemoveHost forgets a host (claimed by someone else, deleted, or no longer claimable): the
// machine assigned to it, if any, waits for the next Assign.
func (m *Matcher) RemoveHost(host string) {
	if mc, ok := m.machine[host]; ok {
		m.unassign(mc)
		delete(m.pinned, mc)
	}
	for mc, hosts := range m.accepts {
		if i := slices.Index(hosts, host); i >= 0 {
			m.accepts[mc] = slices.Delete(slices.Clone(hosts), i, i+1)
		}
	}
}

// Claimed removes a machine and its host together once the claim is committed. The matching
// stays maximum: removing both ends of a matched pair leaves no augmenting path behind.
func (m *Matcher) Claimed(machine, host string) {
	m.Remove(machine)
	m.RemoveHost(host)
}

// Pin stops the machine's host from moving to another machine (a claim of it is under way).
func (m *Matcher) Pin(machine string) { m.pinned[machine] = true }

// Unpin lets the machine's host move again.
func (m *Matcher) Unpin(machine string) {
	if m.pinned[machine] {
		delete(m.pinned, machine)
		m.stale = true
	}
}

// Assign returns the host assigned to machine, first extending the matching if the machine has
// none: along an augmenting path from it, which may move other machines that are not pinned.
// With the graph changed in a way that could serve other waiting machines, it first tries them
// all. "" means no host can be given to the machine without taking one from another.
func (m *Matcher) Assign(machine string) string {
	if _, ok := m.accepts[machine]; !ok {
		return ""
	}
	if m.stale {
		m.augmentAll()
	}
	if h, ok := m.hostOf[machine]; ok {
		return h
	}
	seen := map[string]bool{}
	m.augment(machine, seen)
	return m.hostOf[machine]
}

// Host returns the host assigned to machine without changing anything.
func (m *Matcher) Host(machine string) string { return m.hostOf[machine] }

// Matched is the size of the current matching.
func (m *Matcher) Matched() int { return len(m.hostOf) }

// augmentAll tries every unmatched machine once. Hosts visited by a failed search are kept for
// the next ones (they cannot lead to a free host while the matching is unchanged); a success
// clears them.
func (m *Matcher) augmentAll() {
	m.stale = false
	waiting := make([]string, 0, len(m.accepts)-len(m.hostOf))
	for mc := range m.accepts {
		if _, ok := m.hostOf[mc]; !ok {
			waiting = append(waiting, mc)
		}
	}
	slices.Sort(waiting) // the same result for the same graph
	seen := map[string]bool{}
	for _, mc := range waiting {
		if m.augment(mc, seen) {
			clear(seen)
		}
	}
}

// augment looks for an augmenting path from an unmatched machine (depth first, preferred hosts
// first: a free preferred host is taken before any other machine is moved) and applies it.
func (m *Matcher) augment(start string, seen map[string]bool) bool {
	// Free hosts first, in preference order, so that a single machine gets its first choice.
	for _, h := range m.accepts[start] {
		if _, taken := m.machine[h]; !taken && !seen[h] {
			m.assign(start, h)
			return true
		}
	}
	// Then an iterative search through hosts held by movable machines.
	type frame struct {
		machine string
		next    int
	}
	parent := map[string]string{} // host -> machine that reached it
	stack := []frame{{machine: start}}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		hosts := m.accepts[top.machine]
		if top.next >= len(hosts) {
			stack = stack[:len(stack)-1]
			continue
		}
		h := hosts[top.next]
		top.next++
		if seen[h] {
			continue
		}
		seen[h] = true
		parent[h] = top.machine
		holder, taken := m.machine[h]
		if !taken {
			// Flip the path: each machine on it takes the host it reached.
			for h != "" {
				mc := parent[h]
				prev := m.hostOf[mc]
				m.assign(mc, h)
				if mc == start {
					break
				}
				h = prev
			}
			return true
		}
		if m.pinned[holder] {
			continue
		}
		stack = append(stack, frame{machine: holder})
	}
	return false
}

func (m *Matcher) assign(machine, host string) {
	if old, ok := m.hostOf[machine]; ok && m.machine[old] == machine {
		delete(m.machine, old)
	}
	m.hostOf[machine] = host
	m.machine[host] = machine
}

func (m *Matcher) unassign(machine string) {
	if h, ok := m.hostOf[machine]; ok {
		delete(m.machine, h)
		delete(m.hostOf, machine)
		m.stale = true
	}
}

// MaximumMatching returns a maximum matching of the machines to the hosts they accept, computed
// from scratch with Hopcroft–Karp. The controller keeps a Matcher instead; this is the reference
// its results are measured against (the bench reports machines served against it).
func MaximumMatching(accepts map[string][]string) map[string]string {
	machines := make([]string, 0, len(accepts))
	for mc := range accepts {
		machines = append(machines, mc)
	}
	slices.Sort(machines)
	hostIdx := map[string]int{}
	var hosts []string
	adj := make([][]int, len(machines))
	for i, mc := range machines {
		for _, h := range accepts[mc] {
			j, ok := hostIdx[h]
			if !ok {
				j = len(hosts)
				hostIdx[h] = j
				hosts = append(hosts, h)
			}
			adj[i] = append(adj[i], j)
		}
	}
	const none = -1
	matchM := make([]int, len(machines))
	matchH := make([]int, len(hosts))
	for i := range matchM {
		matchM[i] = none
	}
	for j := range matchH {
		matchH[j] = none
	}
	dist := make([]int, len(machines))
	const inf = int(^uint(0) >> 1)
	bfs := func() bool {
		queue := make([]int, 0, len(machines))
		for i := range machines {
			if matchM[i] == none {
				dist[i] = 0
				queue = append(queue, i)
			} else {
				dist[i] = inf
			}
		}
		found := false
		for q := 0; q < len(queue); q++ {
			i := queue[q]
			for _, j := range adj[i] {
				k := matchH[j]
				switch {
				case k == none:
					found = true
				case dist[k] == inf:
					dist[k] = dist[i] + 1
					queue = append(queue, k)
				}
			}
		}
		return found
	}
	var dfs func(i int) bool
	dfs = func(i int) bool {
		for _, j := range adj[i] {
			k := matchH[j]
			if k == none || dist[k] == dist[i]+1 && dfs(k) {
				matchM[i], matchH[j] = j, i
				return true
			}
		}
		dist[i] = inf
		return false
	}
	for bfs() {
		for i := range machines {
			if matchM[i] == none {
				dfs(i)
			}
		}
	}
	out := map[string]string{}
	for i, j := range matchM {
		if j != none {
			out[machines[i]] = hosts[j]
		}
	}
	return out
}
