// Package measure holds what the scale benchmarks measure besides time: the CPU each process of
// a run used (API server, etcd, manager, the benchmark), a process's peak memory, how busy the
// machine was, its load average, and from the API server's metrics its own count of writes and reads
// by resource and the bytes of watch events it sent.
package measure

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/procfs"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// MachineBusy starts measuring how busy the machine's CPUs are; the function it returns gives the
// share of CPU time spent busy since, in percent.
func MachineBusy() func() float64 {
	read := func() (busy, total int64) {
		data, err := os.ReadFile("/proc/stat")
		if err != nil {
			return 0, 0
		}
		line, _, _ := strings.Cut(string(data), "\n")
		for i, f := range strings.Fields(line)[1:] {
			v, _ := strconv.ParseInt(f, 10, 64)
			total += v
			if i != 3 && i != 4 { // idle, iowait
				busy += v
			}
		}
		return busy, total
	}
	b0, t0 := read()
	return func() float64 {
		b1, t1 := read()
		if t1 == t0 {
			return 0
		}
		return 100 * float64(b1-b0) / float64(t1-t0)
	}
}

// LoadAverage is the machine's 1-minute load average as /proc/loadavg says it, "?" if unknown.
// The benchmarks print it beside every figure: on a shared machine it says how much else ran.
func LoadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

// CPUUse is the CPU time each process used, by name: kube-apiserver, etcd, manager, benchmark.
type CPUUse map[string]time.Duration

// ProcessNames are the processes CPUSplit measures.
var ProcessNames = []string{"kube-apiserver", "etcd", "manager", "benchmark"}

func (u CPUUse) String() string {
	var parts []string
	for _, name := range ProcessNames {
		if d, ok := u[name]; ok {
			parts = append(parts, fmt.Sprintf("%s %.2fs", name, d.Seconds()))
		}
	}
	return strings.Join(parts, ", ")
}

// Server is the CPU the API server and etcd used.
func (u CPUUse) Server() time.Duration { return u["kube-apiserver"] + u["etcd"] }

// CPUSplit starts measuring the CPU time used by the API server and etcd (children of this
// process), the manager (pid; 0 for none) and this process itself; the function it returns says
// how much each has used since.
func CPUSplit(manager int) func() CPUUse {
	pids := map[string]int{"kube-apiserver": 0, "etcd": 0, "manager": manager, "benchmark": os.Getpid()}
	for pid, name := range Children("kube-apiserver", "etcd", "manager", "benchmark") {
		if pid != manager {
			pids[name] = pid
		}
	}
	before := CPUUse{}
	for _, name := range ProcessNames {
		before[name] = ProcessCPU(pids[name])
	}
	return func() CPUUse {
		used := CPUUse{}
		for _, name := range ProcessNames {
			if pids[name] != 0 {
				used[name] = ProcessCPU(pids[name]) - before[name]
			}
		}
		return used
	}
}

// Children are this process's child processes named one of names (their command name in
// /proc/PID/stat), by pid.
func Children(names ...string) map[int]string {
	out := map[int]string{}
	procs, _ := procfs.AllProcs()
	for _, p := range procs {
		st, err := p.Stat()
		if err == nil && st.PPID == os.Getpid() && slices.Contains(names, st.Comm) {
			out[p.PID] = st.Comm
		}
	}
	return out
}

// ProcessCPU is the CPU time (user + system) the process has used: a controller's own cost,
// which unlike wall time does not depend on what else the machine runs.
func ProcessCPU(pid int) time.Duration {
	st, ok := stat(pid)
	if !ok {
		return 0
	}
	return time.Duration(st.CPUTime() * float64(time.Second))
}

// MajorFaults is how many times the process has waited for a page to be read from disk: in a
// container near its memory limit, the binary's pages the kernel reclaimed and the process
// needed again.
func MajorFaults(pid int) int64 {
	st, _ := stat(pid)
	return signed(uint64(st.MajFlt))
}

// stat is the process's /proc/<pid>/stat; ok is false if it could not be read.
func stat(pid int) (st procfs.ProcStat, ok bool) {
	if pid == 0 {
		return st, false
	}
	p, err := procfs.NewProc(pid)
	if err != nil {
		return st, false
	}
	st, err = p.Stat()
	return st, err == nil
}

// PeakRSS is the process's peak resident memory (VmHWM), 0 if unknown.
func PeakRSS(pid int) int64 { return signed(status(pid).VmHWM) }

// signed is a count /proc gives unsigned as the int64 the benchmarks print, capped (no process
// counts past it).
func signed(v uint64) int64 {
	if v > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
}

// status is the process's /proc/<pid>/status; zero if it could not be read.
func status(pid int) procfs.ProcStatus {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return procfs.ProcStatus{}
	}
	st, _ := p.NewStatus()
	return st
}

// Writes are the API server's counts of requests by resource, keyed
// "<resource>[/<subresource>] <verb>[ refused <code>]": its writes (POST, PUT, PATCH, DELETE,
// APPLY) or its reads past any cache (GET, LIST).
type Writes map[string]int64

var (
	writeVerbs = map[string]bool{"POST": true, "PUT": true, "PATCH": true, "DELETE": true, "APPLY": true}
	readVerbs  = map[string]bool{"GET": true, "LIST": true}
)

// Metrics is one reading of the API server's /metrics, from which a benchmark takes what it
// counts: one request to the server however many figures it wants at that moment.
type Metrics map[string]*dto.MetricFamily

// ReadMetrics reads the API server's metrics now.
func ReadMetrics(ctx context.Context, cfg *rest.Config) (Metrics, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &schema.GroupVersion{}
	c.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	rc, err := rest.UnversionedRESTClientFor(c)
	if err != nil {
		return nil, err
	}
	body, err := rc.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("parsing the API server's metrics: %w", err)
	}
	return families, nil
}

// APIWrites reads the API server's apiserver_request_total counters of writes so far.
func APIWrites(ctx context.Context, cfg *rest.Config) (Writes, error) {
	m, err := ReadMetrics(ctx, cfg)
	return m.Writes(), err
}

// Writes are the apiserver_request_total counters of writes.
func (m Metrics) Writes() Writes { return m.requests(writeVerbs) }

// Reads are the apiserver_request_total counters of reads past any cache (GET, LIST).
func (m Metrics) Reads() Writes { return m.requests(readVerbs) }

func (m Metrics) requests(verbs map[string]bool) Writes {
	out := Writes{}
	for _, s := range m["apiserver_request_total"].GetMetric() {
		labels := labelsOf(s)
		if !verbs[labels["verb"]] {
			continue
		}
		key := labels["resource"]
		if labels["subresource"] != "" {
			key += "/" + labels["subresource"]
		}
		key += " " + labels["verb"]
		if code := labels["code"]; strings.HasPrefix(code, "4") || strings.HasPrefix(code, "5") {
			// Refused (a conflict, AlreadyExists, NotFound) or failed: counted apart, so that a
			// write repeated because a cache lagged shows.
			key += " refused " + code
		}
		out[key] += int64(s.GetCounter().GetValue())
	}
	return out
}

// WatchBytes are the bytes of watch events the API server sent so far, keyed by resource
// (apiserver_watch_events_sizes): every write of an object is sent whole to each of its
// watchers (a controller's informers), so a status listing every machine, rewritten while
// machines join, shows here as bytes that grow with the square of a scale-up's size. (The API
// server's metrics size only the responses of reads, not the objects its writes stored.)
func (m Metrics) WatchBytes() Writes {
	out := Writes{}
	for _, s := range m["apiserver_watch_events_sizes"].GetMetric() {
		labels := labelsOf(s)
		res := labels["resource"]
		if res == "" { // before Kubernetes 1.32 the label was the kind
			res = strings.ToLower(labels["kind"]) + "s"
		}
		out[res] += int64(s.GetHistogram().GetSampleSum())
	}
	return out
}

// Conversions are the conversion webhook's answers so far, by resource and direction ("from ->
// to"), successful or not (apiserver_crd_conversion_webhook_duration_seconds).
func (m Metrics) Conversions() Writes {
	out := Writes{}
	for _, s := range m["apiserver_crd_conversion_webhook_duration_seconds"].GetMetric() {
		labels := labelsOf(s)
		key := strings.SplitN(labels["crd_name"], ".", 2)[0] + " " + labels["from_version"] + " -> " + labels["to_version"]
		if labels["succeeded"] != "true" {
			key += " (failed)"
		}
		out[key] += int64(min(s.GetHistogram().GetSampleCount(), math.MaxInt64)) // a count of calls: never near the limit
	}
	return out
}

// ConsistencyChecks are the API server's cache consistency checks so far, by resource (with the
// status in brackets for those that found the cache and etcd apart, "(failure)", or erred), from
// apiserver_storage_consistency_checks_total: each one lists every object of its resource
// from etcd.
func (m Metrics) ConsistencyChecks() Writes {
	out := Writes{}
	for _, s := range m["apiserver_storage_consistency_checks_total"].GetMetric() {
		labels := labelsOf(s)
		key := labels["resource"]
		if labels["group"] != "" {
			key += "." + labels["group"]
		}
		if labels["status"] != "success" {
			key += " (" + labels["status"] + ")"
		}
		out[key] += int64(s.GetCounter().GetValue())
	}
	return out
}

func labelsOf(s *dto.Metric) map[string]string {
	out := make(map[string]string, len(s.GetLabel()))
	for _, l := range s.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// Minus is what was written since before.
func (w Writes) Minus(before Writes) Writes {
	out := Writes{}
	for k, v := range w {
		if d := v - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// Only keeps the writes to the given resources (by resource name, any subresource or verb).
func (w Writes) Only(resources ...string) Writes { return w.filter(true, resources) }

// Except keeps the writes to every other resource than the given ones.
func (w Writes) Except(resources ...string) Writes { return w.filter(false, resources) }

func (w Writes) filter(keep bool, resources []string) Writes {
	out := Writes{}
	for k, v := range w {
		res, _, _ := strings.Cut(k, " ")
		res, _, _ = strings.Cut(res, "/")
		if slices.Contains(resources, res) == keep {
			out[k] = v
		}
	}
	return out
}

// Total is the number of writes.
func (w Writes) Total() int64 {
	var sum int64
	for _, v := range w {
		sum += v
	}
	return sum
}

// Keys are the keys in order.
func (w Writes) Keys() []string {
	keys := make([]string, 0, len(w))
	for k := range w {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// WatchPeakAnon samples the process's anonymous resident memory (RssAnon: its heap, stacks and
// the Go runtime's own memory, without the binary's file-backed pages, about 50 MiB of a
// controller binary that the kernel can drop and read again) every 100 ms until ctx ends; the
// returned func gives the peak so far. VmHWM (PeakRSS) counts both; a benchmark prints the two,
// since a container's usage counts the binary's pages as well while they stay cached.
func WatchPeakAnon(ctx context.Context, pid int) func() int64 {
	var peak atomic.Int64
	sample := func() {
		if v := signed(status(pid).RssAnon); v > peak.Load() {
			peak.Store(v)
		}
	}
	sampleUntilDone(ctx, sample)
	return func() int64 { sample(); return peak.Load() }
}
