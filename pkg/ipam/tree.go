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

func (t *takenSet) contains(key u128) bool {
	n := t.root
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

// insert adds key; it reports false when key was already there.
func (t *takenSet) insert(key u128) bool {
	if t.contains(key) {
		return false
	}
	var n int32
	if k := len(t.free); k > 0 {
		n, t.free = t.free[k-1], t.free[:k-1]
	} else {
		t.nodes = append(t.nodes, treapNode{})
		n = int32(len(t.nodes) - 1) //nolint:gosec // a pool index holds far fewer than 2^31 taken addresses
	}
	t.nodes[n] = treapNode{key: key, prio: t.nextPrio(), size: 1}
	left, right := t.split(t.root, key)
	t.root = t.merge(t.merge(left, n), right)
	return true
}

// remove deletes key; it reports false when key was not there.
func (t *takenSet) remove(key u128) bool {
	if !t.contains(key) {
		return false
	}
	left, rest := t.split(t.root, key)
	mid, right := t.split(rest, key.addU64(1))
	// key+1 wraps only for the maximum u128, which no pool position can be (a pool holds at most
	// 2^128-1 addresses, numbered from 0).
	t.free = append(t.free, mid)
	t.root = t.merge(left, right)
	return true
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

// clear empties the set and keeps its memory.
func (t *takenSet) clear() {
	t.nodes = t.nodes[:1]
	t.free = t.free[:0]
	t.root = 0
}
