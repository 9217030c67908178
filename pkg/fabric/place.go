package fabric

import (
	"fmt"
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
}

// Place gives each network the cards of one host that carry it: for each network in order, the
// free cards meeting its hint, slowest first (the seed: "the lowest performance is preferred"),
// ties by position. The result has one entry per card: the network's name, or "" for a card
// left unused. It fails, naming the network, when a host has too few fitting cards.
func Place(cards []Card, needs []NetworkNeed) ([]string, error) {
	out := make([]string, len(cards))
	for _, n := range needs {
		want := max(n.Cards, 1)
		var fit []int
		for i, c := range cards {
			if out[i] == "" && c.Speed >= n.Speed && c.SmartNIC == n.SmartNIC {
				fit = append(fit, i)
			}
		}
		if len(fit) < want {
			return nil, fmt.Errorf("network %s needs %d free card(s) of at least %d Mb/s with smartNIC=%t; the host has %d", n.Name, want, n.Speed, n.SmartNIC, len(fit))
		}
		sort.SliceStable(fit, func(a, b int) bool { return cards[fit[a]].Speed < cards[fit[b]].Speed })
		for _, i := range fit[:want] {
			out[i] = n.Name
		}
	}
	return out, nil
}
