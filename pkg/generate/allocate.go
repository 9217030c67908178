package generate

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
)

// State is the address state the cluster keeps: network -> node -> address.
type State map[string]map[string]netip.Addr

// Clone returns a deep copy.
func (s State) Clone() State {
	out := State{}
	for net, nodes := range s {
		out[net] = maps.Clone(nodes)
	}
	return out
}

// Addresses returns the node's addresses by network.
func (s State) Addresses(node string) map[string]netip.Addr {
	out := map[string]netip.Addr{}
	for net, nodes := range s {
		if a, ok := nodes[node]; ok {
			out[net] = a
		}
	}
	return out
}

// Change is one address given to or taken from a node.
type Change struct {
	Network, Node string
	Address       netip.Addr
	// Freed is true when the node gives the address back (--delete).
	Freed bool
}

func (c Change) String() string {
	if c.Freed {
		return fmt.Sprintf("%s: free %s from %s", c.Network, c.Address, c.Node)
	}
	return fmt.Sprintf("%s: %s gets %s", c.Network, c.Node, c.Address)
}

// Allocate gives every node of the file an address in each network its unit's template takes
// one from, and returns the new state with what changed. An address a node already holds is
// kept, so running it again changes nothing; a new address is the lowest of the network's
// addressRange (or the first of its addresses list) that nobody holds. The state given is not
// modified.
func (f *File) Allocate(state State) (State, []Change, error) {
	next := state.Clone()
	var changes []Change
	for _, u := range f.Units {
		for _, node := range u.Nodes {
			for _, netName := range u.Networks() {
				if _, ok := next[netName][node.Name]; ok {
					continue
				}
				n := f.Networks[netName]
				a, err := n.free(next[netName])
				if err != nil {
					return nil, nil, fmt.Errorf("%w, for %s", err, node.Name)
				}
				if next[netName] == nil {
					next[netName] = map[string]netip.Addr{}
				}
				next[netName][node.Name] = a
				changes = append(changes, Change{Network: netName, Node: node.Name, Address: a})
			}
		}
	}
	return next, changes, nil
}

// free returns the first address of the network nobody holds.
func (n *Network) free(held map[string]netip.Addr) (netip.Addr, error) {
	taken := make(map[netip.Addr]bool, len(held))
	for _, a := range held {
		taken[a] = true
	}
	// The gateway is never a node's address.
	if gw, err := netip.ParseAddr(n.Gateway); err == nil {
		taken[gw] = true
	}
	if n.AddressRange != nil {
		for a := n.AddressRange.Start; a.IsValid() && !n.AddressRange.End.Less(a); a = a.Next() {
			if !taken[a] {
				return a, nil
			}
		}
		return netip.Addr{}, fmt.Errorf("network %s: addressRange %s-%s is used up (%d addresses held); widen infra.networks.%s.addressRange or free nodes with --delete",
			n.Name, n.AddressRange.Start, n.AddressRange.End, len(held), n.Name)
	}
	for _, a := range n.Addresses {
		if !taken[a] {
			return a, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("network %s: all %d of its addresses are held (%s); add addresses to infra.networks.%s.addresses or free nodes with --delete",
		n.Name, len(n.Addresses), holders(held), n.Name)
}

func holders(held map[string]netip.Addr) string {
	nodes := slices.Sorted(maps.Keys(held))
	parts := make([]string, len(nodes))
	for i, node := range nodes {
		parts[i] = node + "=" + held[node].String()
	}
	return strings.Join(parts, ", ")
}

// Release frees every address the node holds and returns the new state with what changed.
func (s State) Release(node string) (State, []Change) {
	next := s.Clone()
	var changes []Change
	for _, net := range slices.Sorted(maps.Keys(next)) {
		if a, ok := next[net][node]; ok {
			delete(next[net], node)
			changes = append(changes, Change{Network: net, Node: node, Address: a, Freed: true})
		}
	}
	return next, changes
}
