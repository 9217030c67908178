package openflow

import (
	"cmp"
	"slices"
	"strings"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// Plan compares the flows a switch should carry with those it does (Flows with
// fabric.CookiePrefix and fabric.CookiePrefixMask) and returns the one Apply that makes them
// agree: for each cookie whose flows differ, its cookie removed and its desired flows added; a
// cookie the switch carries but nobody wants, removed. Flows compare after Normalize, in any
// order. Nothing differing gives nothing to apply, so an unchanged pass sends nothing.
func Plan(desired, current []fabric.Flow) (add []fabric.Flow, removeCookies []uint64) {
	want, have := byCookie(desired), byCookie(current)
	cookies := make([]uint64, 0, len(want)+len(have))
	for c := range want {
		cookies = append(cookies, c)
	}
	for c := range have {
		if _, ok := want[c]; !ok {
			cookies = append(cookies, c)
		}
	}
	slices.Sort(cookies)
	for _, c := range cookies {
		w, h := want[c], have[c]
		if slices.EqualFunc(w, h, func(a, b fabric.Flow) bool { return compareFlows(a, b) == 0 }) {
			continue
		}
		if len(h) > 0 {
			removeCookies = append(removeCookies, c)
		}
		add = append(add, w...)
	}
	return add, removeCookies
}

// byCookie groups flows by cookie, each group normalized and sorted.
func byCookie(flows []fabric.Flow) map[uint64][]fabric.Flow {
	out := map[uint64][]fabric.Flow{}
	for _, f := range flows {
		out[f.Cookie] = append(out[f.Cookie], Normalize(f))
	}
	for _, fs := range out {
		slices.SortFunc(fs, compareFlows)
	}
	return out
}

// compareFlows orders flows as Flows returns them: priority, highest first, then field by field
// (every field, so only equal flows compare equal). It formats nothing: a switch's read-back
// sorts every flow of metalwire's, hundreds on a switch of a hundred hosts.
func compareFlows(a, b fabric.Flow) int {
	if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
		return c
	}
	return cmp.Or(cmp.Compare(a.Cookie, b.Cookie), strings.Compare(a.InPort, b.InPort), strings.Compare(a.DLDst, b.DLDst),
		cmp.Compare(a.VLAN, b.VLAN), strings.Compare(a.Proto, b.Proto), strings.Compare(a.NWSrc, b.NWSrc),
		strings.Compare(a.NWDst, b.NWDst), comparePortMasks(a.TPDst, b.TPDst), compareBools(a.Drop, b.Drop))
}

func comparePortMasks(a, b *fabric.PortMask) int {
	if a == nil || b == nil {
		return compareBools(a != nil, b != nil)
	}
	return cmp.Or(cmp.Compare(a.Value, b.Value), cmp.Compare(a.Mask, b.Mask))
}

func compareBools(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
