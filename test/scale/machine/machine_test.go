package machine

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/testenv"
	"github.com/metalwire/metalwire/pkg/hostmatch"
	"github.com/metalwire/metalwire/test/scale/measure"
)

const (
	ns      = "bench-machine"
	cluster = "bench"
	racks   = 10
	// writers create Machines and Metal3Machines, as a MachineDeployment scaling up would;
	// servers make the floor's writes, as many as the manager's workers would.
	writers = 8
	servers = 32
)

// counted are the resources whose writes count: hosts and the infrastructure kinds (Machines are
// Cluster API's).
var counted = []string{"baremetalhosts", "metal3machines", "metal3clusters", "metal3dataclaims", "metal3datas"}

// requests are the API server's counts so far, for the counted resources: writes, reads past
// any cache, and bytes of watch events sent.
type requests struct{ writes, reads, bytes measure.Writes }

// requestsSoFar reads the API server's counts of requests so far from one reading of its metrics.
func requestsSoFar(ctx context.Context, cfg *rest.Config) (requests, error) {
	m, err := measure.ReadMetrics(ctx, cfg)
	return requests{writes: m.Writes().Only(counted...), reads: m.Reads().Only(counted...), bytes: m.WatchBytes().Only(counted...)}, err
}

// since are the requests made since before, without the benchmark's own creation of the n
// Metal3Machines.
func (r requests) since(before requests, n int) (writes, reads, bytes measure.Writes) {
	return machineWrites(r.writes, before.writes, n), r.reads.Minus(before.reads), r.bytes.Minus(before.bytes)
}

// machineWrites are the writes made since before, without the benchmark's own creation of the
// n Metal3Machines.
func machineWrites(now, before measure.Writes, n int) measure.Writes {
	w := now.Minus(before)
	const created = "metal3machines POST"
	if w[created] -= int64(n); w[created] <= 0 {
		delete(w, created)
	}
	return w
}

// workload is the benchmark's fleet: n hosts spread unevenly over racks (rack k has weight k+1),
// and n machines, 70% accepting two neighbouring racks and 30% one rack, chosen uniformly, so
// that the low racks are wanted by more machines than they hold and the machines' choices
// overlap: a first-come choice serves fewer than a maximum matching.
type workload struct {
	hostRack []int
	selector []infrav1.HostSelector
	maximum  int
	assigned map[string]string // a maximum matching, for the floor
}

func newWorkload(n int) workload {
	rng := rand.New(rand.NewPCG(17, uint64(n)))
	w := workload{hostRack: make([]int, n), selector: make([]infrav1.HostSelector, n)}
	total := racks * (racks + 1) / 2
	for i := range n {
		x := rng.IntN(total)
		k := 0
		for x >= k+1 {
			x -= k + 1
			k++
		}
		w.hostRack[i] = k
	}
	// Hosts by rack, so that a machine's acceptable hosts are its racks' lists: a selector is
	// matched against racks, not against each of 10,000 hosts.
	byRack := make([][]string, racks)
	for j, r := range w.hostRack {
		byRack[r] = append(byRack[r], hostName(j))
	}
	accepts := make(map[string][]string, n)
	for i := range n {
		k := rng.IntN(racks)
		vals := []string{rackName(k)}
		if rng.IntN(10) < 7 {
			vals = append(vals, rackName((k+1)%racks))
		}
		w.selector[i] = infrav1.HostSelector{MatchExpressions: []infrav1.HostSelectorRequirement{{Key: "rack", Operator: "in", Values: vals}}}
		sel, err := w.selector[i].Selector()
		if err != nil {
			panic(err)
		}
		var hosts []string
		for r := range racks {
			if sel.Matches(labels.Set{"rack": rackName(r)}) {
				hosts = append(hosts, byRack[r]...)
			}
		}
		accepts[machineName(i)] = hosts
	}
	w.assigned = hostmatch.MaximumMatching(accepts)
	w.maximum = len(w.assigned)
	return w
}

func rackName(k int) string    { return fmt.Sprintf("r%d", k) }
func hostName(i int) string    { return fmt.Sprintf("host-%04d", i) }
func machineName(i int) string { return fmt.Sprintf("m-%04d", i) }

type result struct {
	what          string
	took          time.Duration
	served        int
	writes        measure.Writes
	reads         measure.Writes // GETs and LISTs the API server answered, past any cache
	bytes         measure.Writes // watch events' bytes sent
	serverCPU     time.Duration
	managerCPU    time.Duration
	managerPeak   int64
	load, loadEnd string
}

// memoryLimit is the GOMEMLIMIT every manager run gets: the Deployment's (measure.ManagerMemoryLimit).
var memoryLimit string

// TestMachineScale associates BENCH_MACHINE_N (default 1000) Metal3Machines with as many hosts,
// three times on fresh API servers: the floor (the contract's writes made by plain goroutines
// from a precomputed maximum matching), then the manager with its default client limits, then
// with generous ones.
func TestMachineScale(t *testing.T) {
	n := 1000
	if s := os.Getenv("BENCH_MACHINE_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			t.Fatalf("BENCH_MACHINE_N: %q is not a positive number", s)
		}
		n = v
	}
	var err error
	var describeLimit string
	if memoryLimit, describeLimit, err = measure.ManagerMemoryLimit(); err != nil {
		t.Fatal(err)
	}
	w := newWorkload(n)
	fmt.Printf("\nmachine association at scale: %d Metal3Machines, %d hosts over %d racks, overlapping selectors; a maximum matching serves %d\n",
		n, n, racks, w.maximum)
	fmt.Printf("the manager's memory: %s; its peak resident memory is printed beside it\n", describeLimit)
	fmt.Printf("machines created by %d goroutines; the floor makes the contract's writes (Metal3Machine finalizer, host claim, Metal3Machine metadata and spec, its status) from %d goroutines, no controller\n", writers, servers)

	var results []result
	onFreshServer(t, func(e *testenv.Env) { results = append(results, floor(t, e, w, n)) })
	onFreshServer(t, func(e *testenv.Env) { results = append(results, withManager(t, e, w, n, "default limits", nil)) })
	onFreshServer(t, func(e *testenv.Env) {
		results = append(results, withManager(t, e, w, n, "generous limits", []string{"--kube-api-qps=1000", "--kube-api-burst=2000"}))
	})

	fmt.Printf("\n%-16s %9s %14s %14s %9s %12s %12s %12s %10s %13s %15s %12s %14s\n", "run", "time", "served/max", "writes/mach", "x floor", "server CPU", "manager CPU", "manager peak", "GOMEMLIMIT", "load (1 min)",
		"watch KiB/mach", "CPU ms/mach", "peak KiB/mach")
	for _, r := range results {
		ratio := r.took.Seconds() / results[0].took.Seconds()
		cpu, peak, limit := "-", "-", "-"
		if r.managerPeak > 0 {
			cpu, peak = fmt.Sprintf("%.2f", 1000*r.managerCPU.Seconds()/float64(n)), fmt.Sprintf("%.1f", float64(r.managerPeak)/1024/float64(n))
			limit = measure.LimitMiB(memoryLimit)
		}
		fmt.Printf("%-16s %8.2fs %8d/%-5d %14.2f %9.2f %11.2fs %11.2fs %8.0f MiB %10s %6s->%-6s %15.2f %12s %14s\n", r.what, r.took.Seconds(), r.served, w.maximum,
			float64(r.writes.Total())/float64(n), ratio, r.serverCPU.Seconds(), r.managerCPU.Seconds(), float64(r.managerPeak)/(1<<20), limit, r.load, r.loadEnd,
			float64(r.bytes.Total())/1024/float64(n), cpu, peak)
	}
	fmt.Printf("server floor (API server and etcd CPU for the floor's writes, over %d cores): %.2fs\n", runtime.NumCPU(), results[0].serverCPU.Seconds()/float64(runtime.NumCPU()))
	printPerMachine("writes per machine by resource and verb", results, n, func(r result) measure.Writes { return r.writes })
	printPerMachine("reads past any cache (GET, LIST) per machine by resource", results, n, func(r result) measure.Writes { return r.reads })
	printPerMachine("watch events, bytes per machine by resource", results, n, func(r result) measure.Writes { return r.bytes })
	for _, r := range results[1:] {
		if r.served < w.maximum {
			t.Errorf("%s: served %d machines, a maximum matching serves %d", r.what, r.served, w.maximum)
		}
	}
}

// printPerMachine prints, for each run, the requests counted by of, per machine.
func printPerMachine(title string, results []result, n int, of func(result) measure.Writes) {
	fmt.Printf("\n%s:\n", title)
	for _, r := range results {
		fmt.Printf("  %s:", r.what)
		counts := of(r)
		for _, k := range counts.Keys() {
			fmt.Printf(" %s %.2f;", k, float64(counts[k])/float64(n))
		}
		fmt.Println()
	}
}

// onFreshServer runs f on a fresh API server warmed up with 300 ConfigMaps.
func onFreshServer(t *testing.T, f func(e *testenv.Env)) {
	t.Helper()
	measure.OnFreshServer(t, func(e *testenv.Env) error {
		ctx := context.Background()
		if err := e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "warm-up"}}); err != nil {
			return err
		}
		parallel(t, 300, writers, func(i int) error {
			return e.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "warm-up", Name: fmt.Sprintf("w-%d", i)}})
		})
		return nil
	}, f)
}

// setup makes the namespace, the Cluster (infrastructure provisioned) and its Metal3Cluster,
// and the hosts, registered and available as BMO leaves them after inspection.
func setup(t *testing.T, e *testenv.Env, w workload) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	c := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Cluster", Name: cluster,
		}},
	}
	g.Expect(e.Client.Create(ctx, c)).To(Succeed())
	c.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	g.Expect(e.Client.Status().Update(ctx, c)).To(Succeed())
	g.Expect(e.Client.Create(ctx, &infrav1.Metal3Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster, Labels: map[string]string{clusterv1.ClusterNameLabel: cluster}},
		Spec:       infrav1.Metal3ClusterSpec{ControlPlaneEndpoint: infrav1.APIEndpoint{Host: "192.168.111.249", Port: 6443}},
	})).To(Succeed())
	parallel(t, len(w.hostRack), writers, func(i int) error {
		h := &bmov1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: hostName(i), Labels: map[string]string{"rack": rackName(w.hostRack[i])}}}
		if err := e.Client.Create(ctx, h); err != nil {
			return err
		}
		h.Status.OperationalStatus = bmov1.OperationalStatusOK
		h.Status.Provisioning.State = bmov1.StateAvailable
		return e.Client.Status().Update(ctx, h)
	})
}

// createMachine makes machine i: a Machine with its bootstrap data, and its Metal3Machine.
func createMachine(ctx context.Context, e *testenv.Env, w workload, i int) (*infrav1.Metal3Machine, error) {
	name := machineName(i)
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: cluster}},
		Spec: clusterv1.MachineSpec{
			ClusterName: cluster,
			Bootstrap: clusterv1.Bootstrap{
				ConfigRef:      clusterv1.ContractVersionedObjectReference{APIGroup: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfig", Name: name},
				DataSecretName: ptr.To(name + "-bootstrap"),
			},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Machine", Name: name},
		},
	}
	if err := e.Client.Create(ctx, m); err != nil {
		return nil, err
	}
	m3m := &infrav1.Metal3Machine{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: cluster},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: name, UID: m.UID}},
		},
		Spec: infrav1.Metal3MachineSpec{
			Image:        infrav1.Image{URL: "http://images.example.com/ubuntu.qcow2", Checksum: ptr.To("0123456789abcdef")},
			HostSelector: w.selector[i],
		},
	}
	return m3m, e.Client.Create(ctx, m3m)
}

// parallel runs fn for 0..n-1 from k goroutines and fails the test on the first error.
func parallel(t *testing.T, n, k int, fn func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	var failed atomic.Value
	for w := range k {
		wg.Go(func() {
			for i := w; i < n; i += k {
				if err := fn(i); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatal(err)
	}
}

// floor makes what association requires with no controller: for each machine a maximum
// matching serves, the host claim (consumerRef, image, user data, power, the cluster label; with
// the host's resourceVersion) after the Metal3Machine's finalizer, then its host annotation and
// providerID, and its status; for a machine it cannot serve, its status saying so.
func floor(t *testing.T, e *testenv.Env, w workload, n int) result {
	t.Helper()
	ctx := context.Background()
	setup(t, e, w)
	before, err := requestsSoFar(ctx, e.Config)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	serve := func(m3m *infrav1.Metal3Machine) error {
		cond := func(typ string, st metav1.ConditionStatus, reason, msg string) metav1.Condition {
			return metav1.Condition{Type: typ, Status: st, Reason: reason, Message: msg, LastTransitionTime: metav1.Now()}
		}
		host, ok := w.assigned[m3m.Name]
		if ok {
			// Cluster API's contract: the finalizer is persisted before the host is claimed.
			fin := m3m.DeepCopy()
			fin.Finalizers = []string{infrav1.MachineFinalizer}
			if err := e.Client.Patch(ctx, fin, client.MergeFrom(m3m)); err != nil {
				return err
			}
			m3m = fin
			h := &bmov1.BareMetalHost{}
			if err := e.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: host}, h); err != nil {
				return err
			}
			orig := h.DeepCopy()
			h.Spec.ConsumerRef = &corev1.ObjectReference{APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3Machine", Namespace: ns, Name: m3m.Name}
			h.Spec.Image = &bmov1.Image{URL: m3m.Spec.Image.URL, Checksum: ptr.Deref(m3m.Spec.Image.Checksum, "")}
			h.Spec.UserData = &corev1.SecretReference{Namespace: ns, Name: m3m.Name + "-bootstrap"}
			h.Spec.Online = true
			h.Labels[clusterv1.ClusterNameLabel] = cluster
			if err := e.Client.Patch(ctx, h, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
				return err
			}
			orig3 := m3m.DeepCopy()
			m3m.Annotations = map[string]string{infrav1.HostAnnotation: ns + "/" + host}
			m3m.Spec.ProviderID = fmt.Sprintf("metal3://%s/%s/%s", ns, host, m3m.Name)
			if err := e.Client.Patch(ctx, m3m, client.MergeFrom(orig3)); err != nil {
				return err
			}
			m3m.Status.Conditions = []metav1.Condition{
				cond(infrav1.AssociateBareMetalHostCondition, metav1.ConditionTrue, infrav1.AssociateBareMetalHostSuccessReason, ""),
				cond(infrav1.Metal3MachineReadyCondition, metav1.ConditionFalse, "WaitingForProvisioning", "host "+host+" is provisioning"),
			}
		} else {
			m3m.Status.Conditions = []metav1.Condition{
				cond(infrav1.AssociateBareMetalHostCondition, metav1.ConditionFalse, infrav1.AssociateBareMetalHostFailedReason, "no host"),
				cond(infrav1.Metal3MachineReadyCondition, metav1.ConditionFalse, infrav1.AssociateBareMetalHostFailedReason, "no host"),
			}
		}
		return e.Client.Status().Update(ctx, m3m)
	}
	server := measure.CPUSplit(0)
	load := measure.LoadAverage()
	start := time.Now()
	created := make(chan *infrav1.Metal3Machine, n)
	var wg sync.WaitGroup
	var failed atomic.Value
	for range servers {
		wg.Go(func() {
			for m := range created {
				if err := serve(m); err != nil {
					failed.Store(err)
				}
			}
		})
	}
	parallel(t, n, writers, func(i int) error {
		m, err := createMachine(ctx, e, w, i)
		if err == nil {
			created <- m
		}
		return err
	})
	close(created)
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatalf("floor writes: %v", err)
	}
	took := time.Since(start)
	after, err := requestsSoFar(ctx, e.Config)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	writes, reads, bytes := after.since(before, n)
	return result{what: "floor", took: took, served: w.maximum, writes: writes, reads: reads, bytes: bytes,
		serverCPU: server().Server(), load: load, loadEnd: measure.LoadAverage()}
}

// withManager runs the image's manager (cmd/manager) with --controllers=infrastructure and extra flags, creates the
// machines and waits until as many are served as a maximum matching serves, or nothing changes
// for 30 s. It then checks that no host went to two machines.
func withManager(t *testing.T, e *testenv.Env, w workload, n int, what string, flags []string) result {
	t.Helper()
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	setup(t, e, w)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(os.WriteFile(kubeconfig, e.KubeConfig, 0o600)).To(Succeed())
	args := append([]string{"--kubeconfig", kubeconfig, "--controllers=infrastructure", "--namespace", ns,
		"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0"}, flags...)
	// Any other manager flags, e.g. --profiler-address=localhost:6060 to profile a run.
	args = append(args, strings.Fields(os.Getenv("BENCH_MACHINE_MANAGER_FLAGS"))...)
	// BENCH_MACHINE_HEAP_PROFILE=dir writes the manager's heap profile at the end of each run
	// there (machine-<n>-<run>.pb.gz) and prints where its retained memory sits.
	heapDir, profilerAddr := os.Getenv("BENCH_MACHINE_HEAP_PROFILE"), ""
	if heapDir != "" {
		var err error
		profilerAddr, err = measure.FreeAddress()
		g.Expect(err).NotTo(HaveOccurred())
		args = append(args, "--profiler-address="+profilerAddr)
	}
	mgr := exec.CommandContext(ctx, managerBinary, args...)
	// The soft memory limit the Deployment gives the image's manager (measure.ManagerMemoryLimit).
	mgr.Env = append(os.Environ(), "GOMEMLIMIT="+memoryLimit)
	var logs bytes.Buffer
	mgr.Stdout, mgr.Stderr = &logs, &logs
	g.Expect(mgr.Start()).To(Succeed())
	defer func() {
		cancel()
		_ = mgr.Wait()
		if t.Failed() {
			t.Logf("manager output (%s):\n%s", what, logs.String())
		}
	}()
	g.Eventually(func() []string {
		m3c := &infrav1.Metal3Cluster{}
		_ = e.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: cluster}, m3c)
		return m3c.Finalizers
	}).WithTimeout(2*time.Minute).Should(ContainElement(infrav1.ClusterFinalizer), "the manager never picked up the Metal3Cluster")

	served, last := watchServed(ctx, t, e)
	before, err := requestsSoFar(ctx, e.Config)
	g.Expect(err).NotTo(HaveOccurred())
	cpuBefore := measure.ProcessCPU(mgr.Process.Pid)
	server := measure.CPUSplit(0)
	// BENCH_MACHINE_APISERVER_PROFILE=file writes a CPU profile of the API server over the first
	// 20 s of each manager run (file, then file.2 for the second): where its CPU goes.
	profile := os.Getenv("BENCH_MACHINE_APISERVER_PROFILE")
	if profile != "" && strings.HasPrefix(what, "generous") {
		profile += ".2"
	}
	profiled := measure.ProfileAPIServer(ctx, t, e.Config, profile, 20)
	defer profiled()
	load := measure.LoadAverage()
	start := time.Now()
	parallel(t, n, writers, func(i int) error {
		_, err := createMachine(ctx, e, w, i)
		return err
	})
	// Machines claim once arrivals settle (or once 30 s old): the wait for a stall starts when
	// the last machine was created, not before.
	created := time.Now()
	for served.Load() < int64(w.maximum) {
		progress := time.Unix(0, last.Load())
		if progress.Before(created) {
			progress = created
		}
		if time.Since(progress) > time.Minute {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Unix(0, last.Load()).Sub(start)
	// The writes that follow the last claim count too (statuses of machines left waiting).
	time.Sleep(3 * time.Second)
	after, err := requestsSoFar(ctx, e.Config)
	g.Expect(err).NotTo(HaveOccurred())
	writes, reads, bytes := after.since(before, n)
	r := result{what: what, took: took, served: int(served.Load()), writes: writes, reads: reads, bytes: bytes,
		serverCPU: server().Server(), managerCPU: measure.ProcessCPU(mgr.Process.Pid) - cpuBefore, managerPeak: measure.PeakRSS(mgr.Process.Pid),
		load: load, loadEnd: measure.LoadAverage()}
	if heapDir != "" {
		path := filepath.Join(heapDir, fmt.Sprintf("machine-%d-%s.pb.gz", n, strings.ReplaceAll(what, " ", "-")))
		p, err := measure.HeapProfile(ctx, profilerAddr, path)
		g.Expect(err).NotTo(HaveOccurred())
		fmt.Printf("\nmanager heap, %d machines, %s (%s):\n", n, what, path)
		measure.PrintHeap(p, n, 15)
	}

	hosts := &bmov1.BareMetalHostList{}
	g.Expect(e.Client.List(ctx, hosts, client.InNamespace(ns))).To(Succeed())
	byMachine := map[string]string{}
	consumer := map[string]string{}
	for _, h := range hosts.Items {
		if ref := h.Spec.ConsumerRef; ref != nil {
			g.Expect(byMachine).NotTo(HaveKey(ref.Name), "machine %s holds two hosts", ref.Name)
			byMachine[ref.Name] = h.Name
			consumer[ns+"/"+h.Name] = ref.Kind + " " + ref.Name
		}
	}
	machines := &infrav1.Metal3MachineList{}
	g.Expect(e.Client.List(ctx, machines, client.InNamespace(ns))).To(Succeed())
	for _, m := range machines.Items {
		if ann := m.Annotations[infrav1.HostAnnotation]; ann != "" {
			g.Expect(ns+"/"+byMachine[m.Name]).To(Equal(ann), "machine %s records host %s, whose consumerRef is %q", m.Name, ann, consumer[ann])
		}
	}
	return r
}

// watchServed counts the Metal3Machines that record a host; last is when the count last grew
// (unix nanoseconds).
func watchServed(ctx context.Context, t *testing.T, e *testenv.Env) (count, last *atomic.Int64) {
	t.Helper()
	g := NewWithT(t)
	c, err := cache.New(e.Config, cache.Options{Scheme: e.Scheme, DefaultNamespaces: map[string]cache.Config{ns: {}}})
	g.Expect(err).NotTo(HaveOccurred())
	inf, err := c.GetInformer(ctx, &infrav1.Metal3Machine{})
	g.Expect(err).NotTo(HaveOccurred())
	count, last = &atomic.Int64{}, &atomic.Int64{}
	last.Store(time.Now().UnixNano())
	var mu sync.Mutex
	seen := map[string]bool{}
	note := func(o any) {
		m, ok := o.(*infrav1.Metal3Machine)
		if !ok || m.Annotations[infrav1.HostAnnotation] == "" {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !seen[m.Name] {
			seen[m.Name] = true
			count.Add(1)
			last.Store(time.Now().UnixNano())
		}
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: note, UpdateFunc: func(_, o any) { note(o) }})
	g.Expect(err).NotTo(HaveOccurred())
	go func() { _ = c.Start(ctx) }()
	g.Expect(c.WaitForCacheSync(ctx)).To(BeTrue())
	return count, last
}
