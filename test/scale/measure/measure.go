// Package measure reads what the scale benchmarks report about processes: CPU time, peak
// memory, how busy the machine was, and the API server's count of writes by group.
package measure

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// ProcessCPU is the CPU time (user + system) the process has used so far.
func ProcessCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	const ticksPerSecond = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticksPerSecond
}

// PeakRSS is the process's peak resident memory (VmHWM), in bytes.
func PeakRSS(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// ChildCPU starts measuring the CPU time of this process's children named name (kube-apiserver,
// etcd); the function it returns gives the sum used since.
func ChildCPU(names ...string) func() time.Duration {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(string(data[end+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		for _, n := range names {
			if string(data[open+1:end]) == n {
				pids = append(pids, pid)
			}
		}
	}
	sum := func() time.Duration {
		var d time.Duration
		for _, p := range pids {
			d += ProcessCPU(p)
		}
		return d
	}
	before := sum()
	return func() time.Duration { return sum() - before }
}

// LoadAverage is the one-minute load average, as a string.
func LoadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(data))[0]
}

// Writes is the API server's count, so far, of write requests (POST, PATCH, PUT, DELETE) to
// each of groups, summed.
func Writes(ctx context.Context, cfg *rest.Config, groups ...string) (int64, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &schema.GroupVersion{}
	c.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return 0, err
	}
	body, err := rc.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, err
	}
	var total int64
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		inGroup := false
		for _, g := range groups {
			inGroup = inGroup || strings.Contains(line, `group="`+g+`"`)
		}
		write := false
		for _, verb := range []string{"POST", "PATCH", "PUT", "DELETE"} {
			write = write || strings.Contains(line, `verb="`+verb+`"`)
		}
		if !inGroup || !write {
			continue
		}
		if v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64); err == nil {
			total += int64(v)
		}
	}
	return total, sc.Err()
}
