package measure

import (
	"math"
	"testing"
)

func TestGrowthSetsTheRunsBesideTheFloors(t *testing.T) {
	base := Size{Machines: 1000, Seconds: 40, Floor: 30}
	g := GrowthOf(base, Size{Machines: 10000, Seconds: 500, Floor: 360})
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: %v, want %v", what, got, want)
		}
	}
	near("ms a machine", g.MsPerMachine, 50)
	near("the floor's ms a machine", g.FloorMsPerMachine, 36)
	near("the run's growth", g.Run, 1.25)
	near("the floor's growth", g.Floor, 1.2)
	near("the run's growth beyond the floor's", g.BeyondFloor(), 1.25/1.2)

	if g := GrowthOf(Size{Machines: 1000, Seconds: 40}, Size{Machines: 5000, Seconds: 200, Floor: 150}); g.Floor != 0 || g.BeyondFloor() != 0 {
		t.Errorf("a growth without the smaller size's floor: %+v, want no floor growth", g)
	}
}
