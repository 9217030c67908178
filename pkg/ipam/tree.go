package ipam

// takenSet is the set of positions that may not be handed to a new owner (allocated, reserved or
// cooling), as a treap: a binary search tree kept balanced by random heap priorities, each node
// counting the nodes below it. Those counts answer both questions allocation asks in O(log n):
//
//   - the lowest free position (sequential), and
//   - the r-th free position (random, with r uniform over the free count),
//
// because for the i-th smallest taken position t_i, t_i - i is the number of free positions below
// it, and that number never decreases from left to right: a search can steer by it.
//
// Nodes live in one slice and are linked by index, so a steady stream of allocations and
// releases allocates no memory and the garbage collector has no pointers to chase.
type takenSet struct {
	nodes []treapNode // nodes[0] is the nil node: size 0
	free  []int32     // recycled node slots
	root  int32
	rng   uint64 // priorities only need to be well spread, not secret or reproducible elsewhere
}

type treapNode struct {
	key         u128
	prio        uint32
	size        uint32
	left, right int32
}

func newTakenSet() *takenSet {
	return &takenSet{nodes: make([]treapNode, 1), rng: 0x9e3779b97f4a7c15}
}

func (t *takenSet) len() int { return int(t.nodes[t.root].size) }

// count is len as a 128-bit number, for arithmetic with pool positions.
func (t *takenSet) count() u128 { return u64(uint64(t.nodes[t.root].size)) }

func (t *takenSet) nextPrio() uint32 {
	// xorshift64*: fast and good enough to keep the treap's expected depth logarithmic.
	t.rng ^= t.rng >> 12
	t.rng ^= t.rng << 25
	t.rng ^= t.rng >> 27
	return uint32((t.rng * 2685821657736338717) >> 32)
}

func (t *takenSet) containsBelow(n int32, key u128) bool {
	for n != 0 {
		switch c := key.cmp(t.nodes[n].key); {
		case c == 0:
			return true
		case c < 0:
			n = t.nodes[n].left
		default:
			n = t.nodes[n].right
		}
	}
	return false
}

// insert adds key; it reports false when key was already there. It walks down while the nodes
// outrank the new one, then splits the subtree it stops at around key: one walk, no rotations.
func (t *takenSet) insert(key u128) bool {
	// Make room first: link below points into t.nodes, and nothing after this appends to it.
	if len(t.free) == 0 {
		t.nodes = append(t.nodes, treapNode{})
		t.free = append(t.free, int32(len(t.nodes)-1)) //nolint:gosec // a pool index holds far fewer than 2^31 taken addresses
	}
	prio := t.nextPrio()
	link := &t.root
	for cur := *link; cur != 0 && t.nodes[cur].prio > prio; cur = *link {
		if key.cmp(t.nodes[cur].key) == 0 {
			t.resize(key, cur, -1)
			return false
		}
		t.nodes[cur].size++ // the new node will sit below
		if key.cmp(t.nodes[cur].key) < 0 {
			link = &t.nodes[cur].left
		} else {
			link = &t.nodes[cur].right
		}
	}
	if t.containsBelow(*link, key) {
		t.resize(key, *link, -1)
		return false
	}
	k := len(t.free) - 1
	n := t.free[k]
	t.free = t.free[:k]
	left, right := t.split(*link, key)
	t.nodes[n] = treapNode{key: key, prio: prio, left: left, right: right}
	t.fix(n)
	*link = n
	return true
}

// remove deletes key; it reports false when key was not there. The node's two subtrees merge in
// its place.
func (t *takenSet) remove(key u128) bool {
	link := &t.root
	for cur := *link; cur != 0; cur = *link {
		c := key.cmp(t.nodes[cur].key)
		if c == 0 {
			*link = t.merge(t.nodes[cur].left, t.nodes[cur].right)
			t.free = append(t.free, cur)
			return true
		}
		t.nodes[cur].size-- // the removed node was below
		if c < 0 {
			link = &t.nodes[cur].left
		} else {
			link = &t.nodes[cur].right
		}
	}
	t.resize(key, 0, +1)
	return false
}

// resize undoes the size changes of a walk towards key that found nothing to do: it walks the
// same path from the root, adding delta to each node, and stops at node stop.
func (t *takenSet) resize(key u128, stop int32, delta int) {
	for cur := t.root; cur != stop && cur != 0; {
		if delta < 0 {
			t.nodes[cur].size--
		} else {
			t.nodes[cur].size++
		}
		if key.cmp(t.nodes[cur].key) < 0 {
			cur = t.nodes[cur].left
		} else {
			cur = t.nodes[cur].right
		}
	}
}

// split cuts tree n into keys < key and keys >= key.
func (t *takenSet) split(n int32, key u128) (int32, int32) {
	if n == 0 {
		return 0, 0
	}
	node := &t.nodes[n]
	if node.key.cmp(key) < 0 {
		l, r := t.split(node.right, key)
		t.nodes[n].right = l
		t.fix(n)
		return n, r
	}
	l, r := t.split(node.left, key)
	t.nodes[n].left = r
	t.fix(n)
	return l, n
}

// merge joins two trees where every key of a is below every key of b.
func (t *takenSet) merge(a, b int32) int32 {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	case t.nodes[a].prio > t.nodes[b].prio:
		t.nodes[a].right = t.merge(t.nodes[a].right, b)
		t.fix(a)
		return a
	default:
		t.nodes[b].left = t.merge(a, t.nodes[b].left)
		t.fix(b)
		return b
	}
}

func (t *takenSet) fix(n int32) {
	node := &t.nodes[n]
	node.size = 1 + t.nodes[node.left].size + t.nodes[node.right].size
}

// lowestFree is the smallest position not in the set: the count of taken positions that sit
// exactly at their rank (t_i == i), all of which come first.
func (t *takenSet) lowestFree() u128 {
	var packed uint64
	n := t.root
	for n != 0 {
		node := &t.nodes[n]
		rank := packed + uint64(t.nodes[node.left].size)
		if node.key.cmp(u64(rank)) == 0 {
			// Everything up to this node is packed: the hole is to the right.
			packed = rank + 1
			n = node.right
		} else {
			n = node.left
		}
	}
	return u64(packed)
}

// nthFree is the free position with r free positions below it: r plus the number of taken
// positions with at most r free positions below them.
func (t *takenSet) nthFree(r u128) u128 {
	var below uint64
	n := t.root
	for n != 0 {
		node := &t.nodes[n]
		rank := below + uint64(t.nodes[node.left].size)
		if node.key.sub(u64(rank)).cmp(r) <= 0 {
			below = rank + 1
			n = node.right
		} else {
			n = node.left
		}
	}
	pos, _ := r.add(u64(below))
	return pos
}
