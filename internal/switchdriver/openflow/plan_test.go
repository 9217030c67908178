package openflow

import (
	"slices"
	"testing"

	"github.com/metalwire/metalwire/pkg/fabric"
)

func TestPlan(t *testing.T) {
	a, b, c := fabric.ACLCookie("h1", "n"), fabric.ACLCookie("h2", "n"), fabric.ACLCookie("h3", "n")
	ssh := &fabric.PortMask{Value: 22, Mask: 0xffff}
	a1 := fabric.Flow{Cookie: a, Priority: 30000, DLDst: "02:00:00:00:00:0A", Proto: "tcp", TPDst: ssh, Drop: true}
	a2 := fabric.Flow{Cookie: a, Priority: 29999, InPort: "p1"}
	a2read := a2
	a1read := Normalize(a1)
	a1read.TPDst = &fabric.PortMask{Value: 22, Mask: 0xffff} // another pointer, same value
	b1 := fabric.Flow{Cookie: b, Priority: 30000, InPort: "p2", Proto: "ip", NWDst: "10.1.2.3/8"}
	b1read := fabric.Flow{Cookie: b, Priority: 30000, InPort: "p2", Proto: "ip", NWDst: "10.0.0.0/8"}
	b1changed := b1
	b1changed.Drop = true
	c1 := fabric.Flow{Cookie: c, Priority: 30000, InPort: "p3"}

	for _, tc := range []struct {
		name             string
		desired, current []fabric.Flow
		wantAdd          []fabric.Flow
		wantRemove       []uint64
	}{
		{name: "empty switch", desired: []fabric.Flow{a1, a2, b1}, wantAdd: []fabric.Flow{a1, a2, b1}},
		{name: "in step, any order and spelling", desired: []fabric.Flow{a1, a2, b1}, current: []fabric.Flow{b1read, a2read, a1read}},
		{name: "one cookie changed", desired: []fabric.Flow{a1, a2, b1changed}, current: []fabric.Flow{a1read, a2read, b1read},
			wantAdd: []fabric.Flow{b1changed}, wantRemove: []uint64{b}},
		{name: "a flow of a cookie missing", desired: []fabric.Flow{a1, a2}, current: []fabric.Flow{a1read},
			wantAdd: []fabric.Flow{a1, a2}, wantRemove: []uint64{a}},
		{name: "an extra flow under a cookie", desired: []fabric.Flow{a1}, current: []fabric.Flow{a1read, a2read},
			wantAdd: []fabric.Flow{a1}, wantRemove: []uint64{a}},
		{name: "a host gone", desired: []fabric.Flow{a1, a2}, current: []fabric.Flow{a1read, a2read, c1},
			wantRemove: []uint64{c}},
	} {
		add, remove := Plan(tc.desired, tc.current)
		slices.Sort(remove)
		slices.Sort(tc.wantRemove)
		specs := func(fs []fabric.Flow) []string {
			out := []string{}
			for _, f := range fs {
				out = append(out, Normalize(f).OfctlSpec())
			}
			slices.Sort(out)
			return out
		}
		if !slices.Equal(specs(add), specs(tc.wantAdd)) || !slices.Equal(remove, tc.wantRemove) {
			t.Errorf("%s: Plan = add %v, remove %#x; want add %v, remove %#x", tc.name, specs(add), remove, specs(tc.wantAdd), tc.wantRemove)
		}
	}
}
