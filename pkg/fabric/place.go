package fabric

import (
	"fmt"
	"slices"
	"sort"
)

// Card is one network card of a host as placement sees it.
type Card struct {
	Speed    int
	SmartNIC bool
}

// NetworkNeed is what one network asks of every host that joins.
type NetworkNeed struct {
	Name     string
	Speed    int  // lowest acceptable Mb/s
	SmartNIC bool // the card must (not) be a SmartNIC
	// Cards is how many cards carry the network (linkAggregation, at least 1).
	Cards int
	// Trunk: the network is carried tagged, and may share cards with other trunk networks.
	Trunk bool
}

// Place gives each network the cards of one host that carry it: for each network in order, the
// cards meeting its hint, slowest first (the seed: "the lowest performance is preferred"), ties
// by position. An access network takes free cards only. A trunk network takes first the cards
// already carrying trunk networks, then free ones, so trunk networks share a trunk port. The
// result has one entry per card: the networks it carries, in the order of needs (nil for a
// card left unused). It fails, naming the network, when a host has too few fitting cards.
func Place(cards []Card, needs []NetworkNeed) ([][]string, error) {
	out := make([][]string, len(cards))
	trunk := make([]bool, len(cards))
	for _, n := range needs {
		want := max(n.Cards, 1)
		var shared, free []int
		for i, c := range cards {
			if c.Speed < n.Speed || c.SmartNIC != n.SmartNIC {
				continue
			}
			switch {
			case len(out[i]) == 0:
				free = append(free, i)
			case n.Trunk && trunk[i]:
				shared = append(shared, i)
			}
		}
		slowest := func(s []int) {
			sort.SliceStable(s, func(a, b int) bool { return cards[s[a]].Speed < cards[s[b]].Speed })
		}
		slowest(shared)
		slowest(free)
		fit := slices.Concat(shared, free)
		if len(fit) < want {
			kind := "free card(s)"
			if n.Trunk {
				kind = "free or trunk card(s)"
			}
			return nil, fmt.Errorf("network %s needs %d %s of at least %d Mb/s with smartNIC=%t; the host has %d", n.Name, want, kind, n.Speed, n.SmartNIC, len(fit))
		}
		for _, i := range fit[:want] {
			out[i] = append(out[i], n.Name)
			trunk[i] = n.Trunk
		}
	}
	return out, nil
}
