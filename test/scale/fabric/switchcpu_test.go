package fabric

import (
	"fmt"
	"strings"
	"time"

	"github.com/metalwire/metalwire/test/scale/measure"
)

// switchCPU starts measuring the CPU time the switches use (this process's ovsdb-server and
// ovs-vswitchd children): they share the machine's cores with the API server and the manager,
// and with access lists each switch also runs an ovs-vswitchd that part 1's run has not. The
// returned function gives what each program used since, by name.
func switchCPU() func() map[string]time.Duration {
	pids := measure.Children("ovsdb-server", "ovs-vswitchd")
	before := map[int]time.Duration{}
	for pid := range pids {
		before[pid] = measure.ProcessCPU(pid)
	}
	return func() map[string]time.Duration {
		used := map[string]time.Duration{}
		for pid, name := range pids {
			used[name] += measure.ProcessCPU(pid) - before[pid]
		}
		return used
	}
}

// cpuByName prints what switchCPU measured, ovsdb-server first.
func cpuByName(used map[string]time.Duration) string {
	var parts []string
	for _, name := range []string{"ovsdb-server", "ovs-vswitchd"} {
		if d, ok := used[name]; ok {
			parts = append(parts, fmt.Sprintf("%s %.2fs", name, d.Seconds()))
		}
	}
	if len(parts) == 0 {
		return "none measured"
	}
	return strings.Join(parts, ", ")
}
