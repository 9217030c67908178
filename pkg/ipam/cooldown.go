package ipam

import (
	"net/netip"
	"time"
)

// cooldown is a released address's grace period: until `until`, only `owner` may have it back.
type cooldown struct {
	owner string
	until time.Time
}

// cool starts addr's grace period. The queue lets expire find ended periods without a scan.
func (idx *Index) cool(addr netip.Addr, owner string, until time.Time) {
	idx.cooling[addr] = cooldown{owner: owner, until: until}
	idx.coolingOf[owner] = addr
	idx.queue.push(queued{addr: addr, until: until})
}

// uncool ends addr's grace period early (it was allocated again). Its queue entry goes stale and
// expire skips it.
func (idx *Index) uncool(addr netip.Addr, c cooldown) {
	delete(idx.cooling, addr)
	if idx.coolingOf[c.owner] == addr {
		delete(idx.coolingOf, c.owner)
	}
}

// expire frees every address whose grace period has passed at now: O(log n) each, paid once.
func (idx *Index) expire(now time.Time) {
	for len(idx.queue) > 0 && !idx.queue[0].until.After(now) {
		q := idx.queue.pop()
		c, ok := idx.cooling[q.addr]
		if !ok || !c.until.Equal(q.until) {
			continue // stale: reallocated, or released again later
		}
		idx.uncool(q.addr, c)
		idx.sync(q.addr)
	}
}

type queued struct {
	addr  netip.Addr
	until time.Time
}

// cooldownQueue is a binary min-heap on until. Written out rather than container/heap, whose
// interface boxes every pushed value.
type cooldownQueue []queued

func (q *cooldownQueue) push(v queued) {
	*q = append(*q, v)
	h := *q
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h[i].until.Before(h[parent].until) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

func (q *cooldownQueue) pop() queued {
	h := *q
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		smallest, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && h[l].until.Before(h[smallest].until) {
			smallest = l
		}
		if r < len(h) && h[r].until.Before(h[smallest].until) {
			smallest = r
		}
		if smallest == i {
			break
		}
		h[i], h[smallest] = h[smallest], h[i]
		i = smallest
	}
	*q = h
	return top
}
