package measure

import "fmt"

// Size is what a benchmark measured at one size, per machine: the figures whose growth between
// sizes says whether a machine's cost stays constant as the fleet grows.
type Size struct {
	Machines int
	// Seconds is the time until every machine was served; Floor the floor's, 0 if not measured.
	Seconds, Floor float64
	// PeakBytes is the manager's peak resident memory; WatchBytes the bytes of watch events the
	// API server sent for the run's resources.
	PeakBytes, WatchBytes int64
}

// Growth is the growth of one size's time per machine over the smallest size's: the run's, the
// floor's, and the run's beyond the floor's (Run over Floor). The floor's own time per machine
// grows with size too (a larger etcd and watch cache, a larger heap in the API server); no
// controller making the same writes on the same server can grow less than it.
type Growth struct {
	// MsPerMachine and FloorMsPerMachine are the run's and the floor's milliseconds a machine.
	MsPerMachine, FloorMsPerMachine float64
	// Run and Floor are their growth over the smallest size (1 is a constant cost per
	// machine); Floor is 0 where a size has no floor.
	Run, Floor float64
}

// BeyondFloor is the run's growth over the floor's: 1 where the run's time per machine grows
// exactly as the writes' own does. 0 without a floor.
func (g Growth) BeyondFloor() float64 {
	if g.Floor == 0 {
		return 0
	}
	return g.Run / g.Floor
}

// GrowthOf is s's growth over base.
func GrowthOf(base, s Size) Growth {
	ms := func(seconds float64, machines int) float64 { return 1000 * seconds / float64(machines) }
	g := Growth{MsPerMachine: ms(s.Seconds, s.Machines), FloorMsPerMachine: ms(s.Floor, s.Machines)}
	g.Run = g.MsPerMachine / ms(base.Seconds, base.Machines)
	if s.Floor > 0 && base.Floor > 0 {
		g.Floor = g.FloorMsPerMachine / ms(base.Floor, base.Machines)
	}
	return g
}

// PrintGrowth prints, for sizes in the order run, time, peak memory and watch bytes per machine,
// and each one's growth over the smallest size: 1.00 is a constant cost per machine, 2.00 a
// machine costing twice what it did. The floor's time per machine and its growth stand beside
// the run's, and the run's growth over the floor's. Peak memory per machine includes the
// manager's fixed base and so falls with size; "added" is the peak's growth per machine added
// since the smallest size.
func PrintGrowth(title string, sizes []Size) {
	if len(sizes) == 0 {
		return
	}
	fmt.Printf("\ngrowth per machine, %s (x: over %d machines; 1.00 is a constant cost per machine)\n", title, sizes[0].Machines)
	fmt.Printf("%9s %12s %7s %12s %16s %8s %13s %14s %7s %17s %17s %7s\n", "machines", "ms/machine", "x", "x floor",
		"floor ms/machine", "floor x", "x / floor x", "peak KiB/mach", "x", "added KiB/mach", "watch KiB/mach", "x")
	per := func(v float64, s Size) float64 { return v / float64(s.Machines) }
	base := sizes[0]
	ratio := func(a, b float64) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", a/b)
	}
	orDash := func(v float64, format string) string {
		if v == 0 {
			return "-"
		}
		return fmt.Sprintf(format, v)
	}
	for _, s := range sizes {
		g := GrowthOf(base, s)
		peak, watch := per(float64(s.PeakBytes), s)/1024, per(float64(s.WatchBytes), s)/1024
		added := "-"
		if s.Machines > base.Machines {
			added = fmt.Sprintf("%.1f", float64(s.PeakBytes-base.PeakBytes)/1024/float64(s.Machines-base.Machines))
		}
		fmt.Printf("%9d %12.2f %7.2f %12s %16s %8s %13s %14.1f %7s %17s %17.2f %7s\n", s.Machines,
			g.MsPerMachine, g.Run, ratio(s.Seconds, s.Floor), orDash(g.FloorMsPerMachine, "%.2f"), orDash(g.Floor, "%.2f"), orDash(g.BeyondFloor(), "%.2f"),
			peak, ratio(peak, per(float64(base.PeakBytes), base)/1024), added,
			watch, ratio(watch, per(float64(base.WatchBytes), base)/1024))
	}
}
