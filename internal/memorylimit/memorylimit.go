// Package memorylimit gives the manager's garbage collector a soft limit below the container's
// memory limit, as Kubernetes controllers take it, and says which limit the process runs with.
package memorylimit

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/go-logr/logr"
)

// Ratio is the share of the container's memory limit (its cgroup's memory.max) the manager gives
// Go's garbage collector as a soft limit when GOMEMLIMIT is not set. The soft limit counts the
// Go runtime's memory only; the other tenth is for what it does not count (the binary's pages,
// memory returned to the kernel but not yet reclaimed), so the collector works harder before the
// kernel's OOM killer would stop the container.
const Ratio = 0.9

// Soft is the soft limit the manager sets in a container limited to containerBytes.
func Soft(containerBytes int64) int64 {
	return int64(float64(containerBytes) * Ratio)
}

// Limit says which soft memory limit the process runs with and where it came from.
type Limit struct {
	// Soft is the Go runtime's memory limit in bytes; 0 when there is none.
	Soft int64
	// Container is the cgroup's limit in bytes; 0 when there is none or it was not read.
	Container int64
	// Source is "GOMEMLIMIT" (the environment), "cgroup" (Ratio of Container), or "none".
	Source string
	// Err is why the cgroup's limit could not be read, if it could not.
	Err error
}

// Set gives the collector a soft limit below the container's memory limit. Without one, Go lets
// the heap grow to twice what is live before collecting (GOGC=100), and a manager whose live
// heap passes half the container's limit is killed although it would fit. GOMEMLIMIT, when set,
// is Go's own and wins (the runtime has read it already); otherwise the limit is Ratio of the
// cgroup's memory limit (cgroup v1 or v2, read by automemlimit). Without a cgroup limit nothing
// is set.
func Set() Limit {
	if _, ok := os.LookupEnv("GOMEMLIMIT"); ok {
		return Limit{Soft: current(), Source: "GOMEMLIMIT"}
	}
	container, err := memlimit.FromCgroup()
	switch {
	case errors.Is(err, memlimit.ErrNoLimit):
		return Limit{Source: "none"}
	case err != nil:
		return Limit{Source: "none", Err: err}
	case container > 1<<62: // a limit no machine has: none
		return Limit{Source: "none"}
	}
	soft := Soft(int64(container))
	debug.SetMemoryLimit(soft)
	return Limit{Soft: soft, Container: int64(container), Source: "cgroup"}
}

// current is the runtime's memory limit, 0 for none.
func current() int64 {
	l := debug.SetMemoryLimit(-1)
	if l == 1<<63-1 {
		return 0
	}
	return l
}

// Log writes the limit, so that a person reading the manager's log at start knows how much
// memory it will try to stay within.
func (l Limit) Log(log logr.Logger) {
	switch {
	case l.Source == "GOMEMLIMIT" && l.Soft == 0:
		log.Info("no soft memory limit: GOMEMLIMIT=off; the heap may grow to twice what is live (GOGC)")
	case l.Source == "GOMEMLIMIT":
		log.Info("soft memory limit", "softLimit", MiB(l.Soft), "source", "GOMEMLIMIT")
	case l.Source == "cgroup":
		log.Info("soft memory limit", "softLimit", MiB(l.Soft), "containerLimit", MiB(l.Container),
			"source", fmt.Sprintf("%.0f%% of the container's memory limit", 100*Ratio))
	case l.Err != nil:
		log.Info("no soft memory limit: the container's memory limit could not be read; set GOMEMLIMIT (e.g. 90% of the limit) to have the collector keep within it",
			"error", l.Err.Error())
	default:
		log.Info("no soft memory limit: the container has no memory limit and GOMEMLIMIT is not set; the heap may grow to twice what is live (GOGC)")
	}
}

// MiB writes bytes as mebibytes, one decimal.
func MiB(b int64) string { return fmt.Sprintf("%.1fMiB", float64(b)/(1<<20)) }
