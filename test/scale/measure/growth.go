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

// PrintGrowth prints, for sizes in the order run, time, peak memory and watch bytes per machine,
// and each one's growth over the smallest size: 1.00 is a constant cost per machine, 2.00 a
// machine costing twice what it did. Peak memory per machine includes the manager's fixed base
// and so falls with size; "added" is the peak's growth per machine added since the smallest size.
func PrintGrowth(title string, sizes []Size) {
	if len(sizes) == 0 {
		return
	}
	fmt.Printf("\ngrowth per machine, %s (x: over %d machines; 1.00 is a constant cost per machine)\n", title, sizes[0].Machines)
	fmt.Printf("%9s %12s %7s %12s %14s %7s %17s %17s %7s\n", "machines", "ms/machine", "x", "x floor", "peak KiB/mach", "x", "added KiB/mach", "watch KiB/mach", "x")
	per := func(v float64, s Size) float64 { return v / float64(s.Machines) }
	base := sizes[0]
	ratio := func(a, b float64) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", a/b)
	}
	for _, s := range sizes {
		ms, peak, watch := 1000*per(s.Seconds, s), per(float64(s.PeakBytes), s)/1024, per(float64(s.WatchBytes), s)/1024
		added := "-"
		if s.Machines > base.Machines {
			added = fmt.Sprintf("%.1f", float64(s.PeakBytes-base.PeakBytes)/1024/float64(s.Machines-base.Machines))
		}
		fmt.Printf("%9d %12.2f %7s %12s %14.1f %7s %17s %17.2f %7s\n", s.Machines,
			ms, ratio(ms, 1000*per(base.Seconds, base)), ratio(s.Seconds, s.Floor),
			peak, ratio(peak, per(float64(base.PeakBytes), base)/1024), added,
			watch, ratio(watch, per(float64(base.WatchBytes), base)/1024))
	}
}
