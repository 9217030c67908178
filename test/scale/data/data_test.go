package data

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/memorylimit"
	"github.com/metalwire/metalwire/internal/testenv"
	"github.com/metalwire/metalwire/test/scale/measure"
)

// dataResources are the resources a data-templating scale-up writes.
var dataResources = []string{"metal3dataclaims", "metal3datas", "metal3datatemplates", "ipclaims", "ipaddresses", "ippools", "secrets", "events"}

// quietFor is how long writes are counted once every claim is served: a controller at rest
// writes nothing.
const quietFor = 20 * time.Second

// TestDataScale renders N machines' data (BENCH_DATA_SIZES, default 1000,5000): N
// Metal3DataClaims on one Metal3DataTemplate taking an address from each of two /16 pools. For
// each size it measures, each on an API server of its own: the floor (the required writes made
// by goroutines, no controller), then the manager with its default client limits and with
// generous ones (BENCH_DATA_LIMITS, default "default,generous"). It prints the time until every
// claim reports its rendered data, the ratio to the floor, writes per machine by resource, the
// writes made once everything was served, and the manager's CPU and peak memory.
func TestDataScale(t *testing.T) {
	sizes := envInts(t, "BENCH_DATA_SIZES", []int{1000, 5000})
	if s := os.Getenv("BENCH_DATA_N"); s != "" { // the older name of a single size
		sizes = envInts(t, "BENCH_DATA_N", nil)
	}
	limits := []string{"default", "generous"}
	if s := os.Getenv("BENCH_DATA_LIMITS"); s != "" {
		limits = strings.Split(s, ",")
	}
	var extra []string
	if s := os.Getenv("BENCH_DATA_CONCURRENCY"); s != "" {
		extra = append(extra, "--concurrency="+s)
	}
	// Any other manager flags, e.g. --profiler-address=localhost:6060 to profile a run.
	extra = append(extra, strings.Fields(os.Getenv("BENCH_DATA_MANAGER_FLAGS"))...)
	var err error
	var describeLimit string
	if containerLimit, err = measure.ContainerLimit(); err != nil {
		t.Fatal(err)
	}
	if containerLimit > 0 {
		describeLimit = fmt.Sprintf("in a memory cgroup of its own limited to %.0f MiB (%s), which counts the binary's pages too, and from which it takes its soft limit (%.0f%%) as in a pod",
			float64(containerLimit)/(1<<20), measure.ContainerEnv, 100*memorylimit.Ratio)
	} else if memoryLimit, describeLimit, err = measure.ManagerMemoryLimit(); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("\ndata templating at scale: claims on one Metal3DataTemplate with two /16 IP pools, created by %d goroutines;\n", writers)
	fmt.Printf("the manager is the image's (cmd/manager) with %s (IPPool, Metal3DataTemplate, Metal3DataClaim and Metal3Data at work).\n", managedGroups)
	fmt.Println("floor: the 12 writes a machine requires (claim, Metal3Data, 2 IPClaims, 2 IPAddresses, 2 IPClaim statuses,")
	fmt.Printf("2 Secrets, Metal3Data status, claim status) made by %d goroutines with no controller; server floor: the API\n", floorWorkers)
	fmt.Println("server's and etcd's CPU for them over the cores. load: the machine's 1-minute load average at the end (shared machine).")
	fmt.Printf("the manager's memory: %s; its peak resident memory is printed beside it.\n", describeLimit)
	fmt.Printf("%s.\n", measure.DescribeCacheChecks())

	growth := map[string][]measure.Size{}
	for _, n := range sizes {
		var fl, watchedFl floorResult
		if os.Getenv("BENCH_DATA_FLOOR") != "0" {
			onFreshServer(t, func(e *testenv.Env) { fl = floor(t, e, n, false) })
			fmt.Printf("%6d machines, floor: %.2fs (server floor %.2fs), %.2f writes/machine, load %s\n",
				n, fl.took.Seconds(), fl.server.Seconds(), perMachine(fl.writes.Only(dataResources...).Total(), n), fl.load)
			if os.Getenv("BENCH_DATA_WATCHED_FLOOR") == "1" {
				onFreshServer(t, func(e *testenv.Env) { watchedFl = floor(t, e, n, true) })
				fmt.Printf("%6d machines, floor watched like a controller: %.2fs (server %.2fs), %.2f x the floor\n",
					n, watchedFl.took.Seconds(), watchedFl.server.Seconds(), watchedFl.took.Seconds()/fl.took.Seconds())
			}
		}
		var runs []runResult
		for _, l := range limits {
			flags := append([]string(nil), extra...)
			switch strings.TrimSpace(l) {
			case "default":
			case "generous":
				flags = append(flags, generousLimits...)
			default:
				t.Fatalf("BENCH_DATA_LIMITS: %q is neither default nor generous", l)
			}
			var r runResult
			onFreshServer(t, func(e *testenv.Env) { r = run(t, e, n, strings.TrimSpace(l), flags) })
			runs = append(runs, r)
			growth[r.limits] = append(growth[r.limits], measure.Size{Machines: n, Seconds: r.took.Seconds(), Floor: fl.took.Seconds(),
				PeakBytes: r.peakRSS, WatchBytes: r.bytes.Total()})
		}
		printSize(n, fl, runs)
		if fl.took > 0 && os.Getenv("BENCH_DATA_FLOOR_AFTER") == "1" {
			// The machine's speed can move between a floor and the run after it (another
			// tenant of the host); a second floor after the runs brackets them.
			var after floorResult
			onFreshServer(t, func(e *testenv.Env) { after = floor(t, e, n, false) })
			mean := (fl.took.Seconds() + after.took.Seconds()) / 2
			fmt.Printf("\n  floor again after the runs: %.2fs (server floor %.2fs), %.2f x the floor before them, load %s\n",
				after.took.Seconds(), after.server.Seconds(), after.took.Seconds()/fl.took.Seconds(), after.load)
			for _, r := range runs {
				fmt.Printf("  %s limits: %.2f x the floor before, %.2f x the floor after, %.2f x their mean (%.2fs)\n", r.limits,
					r.took.Seconds()/fl.took.Seconds(), r.took.Seconds()/after.took.Seconds(), r.took.Seconds()/mean, mean)
				// The growth between sizes is read against the floor the runs sat between.
				sizes := growth[r.limits]
				sizes[len(sizes)-1].Floor = mean
			}
		}
		for _, r := range runs {
			printShapes(fl.shapes, r.shapes, r.limits)
		}
		if watchedFl.took > 0 {
			for _, r := range runs {
				fmt.Printf("  %s limits: %.2f x the floor watched like a controller (%.2fs; its server CPU %.2fs, %.2f x the floor's)\n", r.limits,
					r.took.Seconds()/watchedFl.took.Seconds(), watchedFl.took.Seconds(), watchedFl.server.Seconds(), watchedFl.server.Seconds()/fl.server.Seconds())
			}
		}
		printBytes(n, fl, watchedFl, runs)
	}
	if len(sizes) > 1 {
		for _, l := range limits {
			measure.PrintGrowth("data templating, "+strings.TrimSpace(l)+" limits", growth[strings.TrimSpace(l)])
		}
	}
}

// memoryLimit is the GOMEMLIMIT every manager run gets: the Deployment's (measure.ManagerMemoryLimit),
// unless it runs in a container of containerLimit bytes (measure.ContainerEnv), where it takes its
// own from the cgroup.
var (
	memoryLimit    string
	containerLimit int64
)

// runResult is one manager run.
type runResult struct {
	limits        string
	created, took time.Duration
	writes        measure.Writes // from the first claim to the last claim served
	quiet         measure.Writes // in the quietFor after that
	bytes         measure.Writes // watch events' bytes by resource, first claim to last served
	conversions   measure.Writes // conversion webhook calls, first claim to last served
	checks        measure.Writes // the API server's cache consistency checks, the same time
	// others are the writes to any other resource in the same time: none is the data path's, so
	// any here (the machine controller's start-up pass still running, say) is charged to it.
	others measure.Writes
	// reads are the GETs and LISTs the API server answered in the same time (the manager's
	// past its cache, and the benchmark's own).
	reads    measure.Writes
	cpu      time.Duration // the manager's
	server   time.Duration // the API server's and etcd's, over the cores
	peakRSS  int64         // VmHWM: everything resident, the binary's pages too
	peakAnon int64         // anonymous memory only: heap, stacks, the runtime's
	// containerPeak is the peak usage of the manager's cgroup, the binary's pages counted, when it
	// runs in one (measure.ContainerEnv).
	containerPeak int64
	load          string
	shapes        shapes // the fields of its objects
}

func run(t *testing.T, e *testenv.Env, n int, limits string, flags []string) runResult {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := fixture{c: e.Client, ns: fmt.Sprintf("bench-%d", n)}
	if _, err := f.base(ctx); err != nil {
		t.Fatal(err)
	}
	m3ms := f.machines(t, n)
	served := watchServed(ctx, t, e, f.ns)
	heapDir, cpuProfile, profilerAddr := os.Getenv(heapProfileEnv), os.Getenv("BENCH_DATA_MANAGER_PROFILE"), ""
	if heapDir != "" || cpuProfile != "" {
		var err error
		if profilerAddr, err = measure.FreeAddress(); err != nil {
			t.Fatal(err)
		}
	}
	mgr := startManager(t, e, f.ns, profilerAddr, flags)
	defer mgr.stop()
	waitForManager(t, e, mgr, f.ns)
	if containerLimit > 0 {
		mgr.softLimitFromContainer(t)
	}

	metricsBefore, err := measure.ReadMetrics(ctx, e.Config)
	if err != nil {
		t.Fatal(err)
	}
	before := metricsBefore.Writes()
	cpuBefore, faultsBefore := measure.ProcessCPU(mgr.cmd.Process.Pid), measure.MajorFaults(mgr.cmd.Process.Pid)
	peakAnon := measure.WatchPeakAnon(ctx, mgr.cmd.Process.Pid)
	busy := measure.MachineBusy()
	split := measure.CPUSplit(mgr.cmd.Process.Pid)
	seconds := envInts(t, "BENCH_DATA_APISERVER_PROFILE_SECONDS", []int{60})[0]
	profiled := measure.ProfileAPIServer(ctx, t, e.Config, os.Getenv("BENCH_DATA_APISERVER_PROFILE"), seconds)
	defer profiled()
	managerProfiled := measure.ProfileManager(ctx, t, profilerAddr, cpuProfile, seconds)
	defer managerProfiled()
	start := time.Now()
	parallel(t, n, func(i int) error {
		_, err := f.claim(ctx, m3ms[i])
		return err
	})
	created := time.Since(start)
	lastPrint := time.Now()
	for served.Load() < int64(n) {
		if err := mgr.exited(); err != nil {
			t.Fatalf("the manager stopped with %d of %d claims served: %v", served.Load(), n, err)
		}
		if time.Since(start) > max(30*time.Minute, time.Duration(n)*300*time.Millisecond) {
			t.Fatalf("after %s only %d of %d claims report rendered data", time.Since(start), served.Load(), n)
		}
		if time.Since(lastPrint) > 10*time.Second {
			fmt.Printf("  %6.1fs: %d of %d claims served (load %s)%s\n", time.Since(start).Seconds(), served.Load(), n, measure.LoadAverage(), progress(ctx, e, before))
			lastPrint = time.Now()
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(start)
	used := split()
	fmt.Printf("  (%s limits %s, %d machines: machine CPU %.0f%% busy, load %s; CPU used: %s; the manager's major page faults: %d)\n",
		limits, strings.Join(flags, " "), n, busy(), measure.LoadAverage(), used, measure.MajorFaults(mgr.cmd.Process.Pid)-faultsBefore)
	metricsAtServed, err := measure.ReadMetrics(ctx, e.Config)
	if err != nil {
		t.Fatal(err)
	}
	atServed := metricsAtServed.Writes()
	time.Sleep(quietFor)
	atEnd, err := measure.APIWrites(ctx, e.Config)
	if err != nil {
		t.Fatal(err)
	}
	r := runResult{
		limits: limits, created: created, took: took,
		writes: atServed.Minus(before).Only(dataResources...), quiet: atEnd.Minus(atServed).Only(dataResources...),
		bytes:       metricsAtServed.WatchBytes().Minus(metricsBefore.WatchBytes()).Only(dataResources...),
		conversions: metricsAtServed.Conversions().Minus(metricsBefore.Conversions()),
		checks:      metricsAtServed.ConsistencyChecks().Minus(metricsBefore.ConsistencyChecks()),
		others:      atServed.Minus(before).Except(append(dataResources, "leases")...),
		reads:       metricsAtServed.Reads().Minus(metricsBefore.Reads()),
		cpu:         measure.ProcessCPU(mgr.cmd.Process.Pid) - cpuBefore, server: used.Server() / time.Duration(numCPU()), peakRSS: measure.PeakRSS(mgr.cmd.Process.Pid), peakAnon: peakAnon(), load: measure.LoadAverage(),
	}
	if r.shapes, err = sampleShapes(ctx, e.Client, f.ns); err != nil {
		t.Fatal(err)
	}
	if heapDir != "" {
		printManagerHeap(ctx, t, e, f.ns, profilerAddr, heapDir, n, limits)
	}
	mgr.stop()
	r.containerPeak = mgr.containerPeak
	return r
}

// progress is what the manager has written so far, by resource: where a run spends its time
// shows as the stage whose writes lag.
func progress(ctx context.Context, e *testenv.Env, before measure.Writes) string {
	now, err := measure.APIWrites(ctx, e.Config)
	if err != nil {
		return "; " + err.Error()
	}
	w := now.Minus(before).Only(dataResources...)
	parts := make([]string, 0, len(w))
	for _, k := range w.Keys() {
		parts = append(parts, fmt.Sprintf("%s %d", k, w[k]))
	}
	return "\n      writes so far: " + strings.Join(parts, ", ")
}

// watchServed counts the claims of ns whose status reports rendered data: the last write of the
// chain.
func watchServed(ctx context.Context, t *testing.T, e *testenv.Env, ns string) *atomic.Int64 {
	t.Helper()
	c, err := cache.New(e.Config, cache.Options{Scheme: e.Scheme, DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		t.Fatal(err)
	}
	inf, err := c.GetInformer(ctx, &infrav1.Metal3DataClaim{})
	if err != nil {
		t.Fatal(err)
	}
	var count atomic.Int64
	var mu sync.Mutex
	seen := map[string]bool{}
	note := func(o any) {
		claim, ok := o.(*infrav1.Metal3DataClaim)
		if !ok || claim.Status.RenderedData == nil || !meta.IsStatusConditionTrue(claim.Status.Conditions, infrav1.DataClaimReadyCondition) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !seen[claim.Name] {
			seen[claim.Name] = true
			count.Add(1)
		}
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: note, UpdateFunc: func(_, o any) { note(o) }}); err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("the benchmark's cache never synced")
	}
	return &count
}

// onFreshServer runs f on a fresh API server warmed up with 200 machines' objects.
func onFreshServer(t *testing.T, f func(e *testenv.Env)) {
	t.Helper()
	measure.OnFreshServer(t, func(e *testenv.Env) error {
		warm := fixture{c: e.Client, ns: "warm-up"}
		if _, err := warm.base(context.Background()); err != nil {
			return err
		}
		warm.machines(t, 200)
		return nil
	}, f)
}

// limitColumn is what the table's memory limit column shows for r: the manager's GOMEMLIMIT, or
// the peak usage of its container.
func limitColumn(r runResult) string {
	if containerLimit > 0 {
		return fmt.Sprintf("%.0f/%.0f MiB", float64(r.containerPeak)/(1<<20), float64(containerLimit)/(1<<20))
	}
	return measure.LimitMiB(memoryLimit)
}

func limitHeader() string {
	if containerLimit > 0 {
		return "cgroup peak/lim"
	}
	return "GOMEMLIMIT"
}

func printSize(n int, fl floorResult, runs []runResult) {
	fmt.Printf("\n%6d machines %9s %10s %10s %8s %12s %12s %12s %12s %12s %12s %10s %16s %6s %12s %14s\n", n, "limits", "created in", "all served", "x floor",
		"server CPU", "x floor CPU", "writes/mach", "quiet writes", "manager CPU", "manager peak", "anon peak", limitHeader(), "load", "CPU ms/mach", "peak KiB/mach")
	if fl.took > 0 {
		fmt.Printf("%15s %9s %10s %9.2fs %8s %11.2fs %12s %12.2f %12s %12s %12s %10s %16s %6s %12s %14s\n", "", "floor", "", fl.took.Seconds(), "1.00", fl.server.Seconds(), "1.00",
			perMachine(fl.writes.Only(dataResources...).Total(), n), "-", "-", "-", "-", "-", fl.load, "-", "-")
	}
	for _, r := range runs {
		ratio, cpuRatio := "-", "-"
		if fl.took > 0 {
			ratio = fmt.Sprintf("%.2f", r.took.Seconds()/fl.took.Seconds())
			cpuRatio = fmt.Sprintf("%.2f", r.server.Seconds()/fl.server.Seconds())
		}
		fmt.Printf("%15s %9s %9.2fs %9.2fs %8s %11.2fs %12s %12.2f %12d %11.2fs %8.0f MiB %6.0f MiB %16s %6s %12.2f %14.1f\n", "", r.limits, r.created.Seconds(), r.took.Seconds(), ratio,
			r.server.Seconds(), cpuRatio, perMachine(r.writes.Total(), n), r.quiet.Total(), r.cpu.Seconds(), float64(r.peakRSS)/(1<<20), float64(r.peakAnon)/(1<<20), limitColumn(r), r.load,
			1000*r.cpu.Seconds()/float64(n), float64(r.peakRSS)/1024/float64(n))
	}
	keys := []measure.Writes{fl.writes.Only(dataResources...)}
	for _, r := range runs {
		keys = append(keys, r.writes, r.quiet)
	}
	for _, r := range runs {
		for _, k := range r.others.Keys() {
			fmt.Printf("  %s limits: %d writes %s during the run, outside the data path\n", r.limits, r.others[k], k)
		}
	}
	fmt.Printf("\n  writes per machine %30s", "floor")
	for _, r := range runs {
		fmt.Printf(" %10s", r.limits)
	}
	fmt.Printf("   (quiet: total writes in the %s after)\n", quietFor)
	for _, k := range unionKeys(keys...) {
		fmt.Printf("  %-40s %8.2f", k, perMachine(fl.writes[k], n))
		for _, r := range runs {
			fmt.Printf(" %10.2f", perMachine(r.writes[k], n))
		}
		for _, r := range runs {
			if q := r.quiet[k]; q > 0 {
				fmt.Printf("  quiet(%s): %d", r.limits, q)
			}
		}
		fmt.Println()
	}
}

// printBytes prints, per resource, the KiB of watch events the API server sent a machine's
// watchers: per machine it stays the same at every size, unless a status that lists every
// machine is rewritten while machines join. With the floor watched like a controller (watched
// run), its column shows what the same writes of the floor's own objects send its watchers.
func printBytes(n int, fl, watched floorResult, runs []runResult) {
	floors := func(of func(floorResult) measure.Writes) []floorColumn {
		out := []floorColumn{{"floor", of(fl)}}
		if watched.took > 0 {
			out = append(out, floorColumn{"watched", of(watched)})
		}
		return out
	}
	kib := func(v int64) float64 { return float64(v) / 1024 / float64(n) }
	printPerMachine("watch events, KiB per machine", floors(func(f floorResult) measure.Writes { return f.bytes.Only(dataResources...) }),
		runs, func(r runResult) measure.Writes { return r.bytes }, kib)
	// The API server's watch cache of CAPM3's v1beta1 converts each write of a CAPM3 kind
	// (measure.OnFreshServer); a run should make no more of them than its floor.
	printPerMachine("conversion webhook calls per machine", floors(func(f floorResult) measure.Writes { return f.conversions }),
		runs, func(r runResult) measure.Writes { return r.conversions }, func(v int64) float64 { return perMachine(v, n) })
	// A check lists every object of its resource from etcd; they come by the minute, not by the
	// write (measure.CacheChecks), so a longer run meets more of them.
	printPerMachine("cache consistency checks (whole run)", floors(func(f floorResult) measure.Writes { return f.checks }),
		runs, func(r runResult) measure.Writes { return r.checks }, func(v int64) float64 { return float64(v) })
	printPerMachine("reads past the cache per machine", []floorColumn{{"floor", measure.Writes{}}}, runs,
		func(r runResult) measure.Writes { return r.reads }, func(v int64) float64 { return perMachine(v, n) })
}

// floorColumn is a floor's counts in a table beside the runs'.
type floorColumn struct {
	name   string
	counts measure.Writes
}

// printPerMachine prints one table of counts by key, the floors' and each run's, through per.
func printPerMachine(title string, floors []floorColumn, runs []runResult, of func(runResult) measure.Writes, per func(int64) float64) {
	fmt.Printf("\n  %-36s", title)
	var all []measure.Writes
	for _, f := range floors {
		fmt.Printf(" %10s", f.name)
		all = append(all, f.counts)
	}
	for _, r := range runs {
		fmt.Printf(" %10s", r.limits)
		all = append(all, of(r))
	}
	fmt.Println()
	for _, k := range unionKeys(all...) {
		fmt.Printf("  %-36s", k)
		for _, b := range all {
			fmt.Printf(" %10.2f", per(b[k]))
		}
		fmt.Println()
	}
	fmt.Printf("  %-36s", "total")
	for _, b := range all {
		fmt.Printf(" %10.2f", per(b.Total()))
	}
	fmt.Println()
}

func perMachine(v int64, n int) float64 { return float64(v) / float64(n) }

// unionKeys are the keys of every count, in order.
func unionKeys(counts ...measure.Writes) []string {
	all := measure.Writes{}
	for _, c := range counts {
		for k := range c {
			all[k] = 1
		}
	}
	return all.Keys()
}

func envInts(t *testing.T, name string, def []int) []int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v <= 0 {
			t.Fatalf("%s: %q is not a positive number", name, f)
		}
		out = append(out, v)
	}
	return out
}

func numCPU() int { return runtime.NumCPU() }
