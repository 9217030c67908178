package scale

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
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
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/testenv"
	"github.com/metalwire/metalwire/test/scale/floorwatch"
	"github.com/metalwire/metalwire/test/scale/measure"
)

// writers is how many goroutines create claims, as in the anchors' measurements.
const writers = 8

// TestIPAMScale fills one /16 pool with N claims created by 8 goroutines and reports the time
// until every claim holds an address, claims per second, the API writes the manager made per
// claim and its peak memory. Sizes: IPAM_SCALE_SIZES (default 500,2000,10000);
// IPAM_SCALE_FLOORS=0 skips the floors (create only, writes alone, server floor), for quicker runs;
// IPAM_SCALE_WATCHED_FLOOR=1 adds the writes alone watched like a controller.
//
// Every measurement runs on an API server of its own, started for it and warmed up: an API
// server slows down as it holds more objects, and each size is to be measured from the same
// start, not after the objects the earlier ones left.
func TestIPAMScale(t *testing.T) {
	sizes := []int{500, 2000, 10000}
	if s := os.Getenv("IPAM_SCALE_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				t.Fatalf("IPAM_SCALE_SIZES: %q is not a positive number", f)
			}
			sizes = append(sizes, n)
		}
	}

	fmt.Printf("\nIPAM scale: one /16 pool, claims created by %d goroutines, one manager (cmd/manager, the image's) with --controllers=ipam\n", writers)
	fmt.Println("create only: the claims alone, no controller. writes alone: each claim created, then given an IPAddress")
	fmt.Println("and its status by the benchmark itself (32 at once), no controller. server floor: the API server's and")
	fmt.Println("etcd's CPU for those writes over the cores: no IPAM making them can be faster on this machine.")
	watchedFloor := os.Getenv("IPAM_SCALE_WATCHED_FLOOR") == "1"
	if watchedFloor {
		fmt.Println("watched: the writes alone again, with the benchmark holding an informer on IPClaims, IPAddresses and")
		fmt.Println("IPPools (through the manager's cache transform), as an IPAM that must learn of every write holds them.")
	}
	fmt.Printf("%s.\n", measure.DescribeCacheChecks())
	fmt.Printf("%8s %12s %13s %13s %13s %11s %13s %10s %14s %13s %15s\n", "claims", "create only", "writes alone", "server floor", "watched", "created in", "all served in", "claims/s", "writes/claim", "manager CPU", "manager peak")
	var results []result
	for _, n := range sizes {
		var floor, bound, serverFloor, watched time.Duration
		if os.Getenv("IPAM_SCALE_FLOORS") != "0" {
			onFreshServer(t, func(e *testenv.Env) { floor = createOnly(t, e, n) })
			onFreshServer(t, func(e *testenv.Env) { bound, serverFloor = writesAlone(t, e, n, false) })
			if watchedFloor {
				onFreshServer(t, func(e *testenv.Env) { watched, _ = writesAlone(t, e, n, true) })
			}
		}
		var r result
		onFreshServer(t, func(e *testenv.Env) { r = runIPAMScale(t, e, n) })
		results = append(results, r)
		fmt.Printf("%8d %11.2fs %12.2fs %12.2fs %12.2fs %10.2fs %12.2fs %10.0f %14.2f %12.2fs %11.0f MiB\n",
			r.claims, floor.Seconds(), bound.Seconds(), serverFloor.Seconds(), watched.Seconds(), r.created.Seconds(), r.served.Seconds(), float64(r.claims)/r.served.Seconds(),
			float64(r.writes)/float64(r.claims), r.cpu.Seconds(), float64(r.peakRSS)/(1<<20))
		if serverFloor > 0 {
			fmt.Printf("%8d claims: %.2f x the server floor, %.2f x the writes alone", n, r.served.Seconds()/serverFloor.Seconds(), r.served.Seconds()/bound.Seconds())
			if watched > 0 {
				fmt.Printf(", %.2f x the writes alone watched", r.served.Seconds()/watched.Seconds())
			}
			fmt.Println()
		}
	}
	for i := 1; i < len(results); i++ {
		a, b := results[i-1], results[i]
		fmt.Printf("%d -> %d claims (x%.1f): time x%.2f, manager CPU x%.2f\n", a.claims, b.claims,
			float64(b.claims)/float64(a.claims), b.served.Seconds()/a.served.Seconds(), b.cpu.Seconds()/a.cpu.Seconds())
	}
}

// onFreshServer runs f on a fresh API server warmed up with 500 claims.
func onFreshServer(t *testing.T, f func(e *testenv.Env)) {
	t.Helper()
	measure.OnFreshServer(t, func(e *testenv.Env) error {
		newNamespace(t, e, "warm-up")
		return createClaims(context.Background(), e, "warm-up", 500, nil)
	}, f)
}

type result struct {
	claims               int
	created, served, cpu time.Duration
	writes               int64
	peakRSS              int64
}

func runIPAMScale(t *testing.T, e *testenv.Env, n int) result {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := fmt.Sprintf("ipam-scale-%d", n)
	newNamespace(t, e, ns)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(os.WriteFile(kubeconfig, e.KubeConfig, 0o600)).To(Succeed())

	// The manager, as users run it, with client limits high enough not to be the bottleneck.
	args := []string{"--kubeconfig", kubeconfig,
		"--controllers=ipam", "--namespace", ns, "--leader-elect=false",
		"--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--kube-api-qps=2000", "--kube-api-burst=4000", "--v=0"}
	profiles := os.Getenv("IPAM_SCALE_PROFILE")
	if profiles != "" {
		args = append(args, "--profiler-address="+managerProfilerAddress)
	}
	mgr := exec.CommandContext(ctx, managerBinary, args...)
	var logs bytes.Buffer
	mgr.Stdout, mgr.Stderr = &logs, &logs
	g.Expect(mgr.Start()).To(Succeed())
	defer func() {
		cancel()
		_ = mgr.Wait()
		if t.Failed() {
			t.Logf("manager output:\n%s", logs.String())
		}
	}()

	// Count served claims from an informer, not by listing thousands of claims in a loop.
	served := watchServed(ctx, t, e, ns)
	pool := newPool(t, e, ns)
	g.Eventually(func() []string {
		p := &ipamv1.IPPool{}
		_ = e.Client.Get(ctx, client.ObjectKeyFromObject(pool), p)
		return p.Finalizers
	}).WithTimeout(30*time.Second).Should(ContainElement(ipamv1.IPPoolFinalizer), "the manager never picked up the pool")

	writesBefore := ipamWrites(t, e)
	cpuBefore := measure.ProcessCPU(mgr.Process.Pid)
	if profiles != "" {
		wait := profileCPU(t, e, profiles, n)
		defer wait()
	}
	busy := measure.MachineBusy()
	split := measure.CPUSplit(mgr.Process.Pid)
	start := time.Now()
	if err := createClaims(ctx, e, ns, n, nil); err != nil {
		t.Fatalf("creating claims: %v", err)
	}
	created := time.Since(start)
	g.Eventually(served.Load).WithTimeout(10*time.Minute).WithPolling(20*time.Millisecond).Should(BeNumerically("==", n),
		"not every claim was served")
	elapsed := time.Since(start)
	fmt.Printf("(served, %d claims: machine CPU %.0f%% busy; CPU used: %s)\n", n, busy(), split())
	// Writes after the last claim was served count too: the pool status, written at most every
	// 10 s while claims stream in, then once more with every address.
	g.Eventually(func() int64 {
		p := &ipamv1.IPPool{}
		_ = e.Client.Get(ctx, client.ObjectKeyFromObject(pool), p)
		return ptr.Deref(p.Status.Used, 0)
	}).WithTimeout(time.Minute).WithPolling(100*time.Millisecond).Should(BeNumerically("==", n), "the pool status never counted every address")
	writes := ipamWrites(t, e) - writesBefore - int64(n)

	addresses := &ipamv1.IPAddressList{}
	g.Expect(e.Client.List(ctx, addresses, client.InNamespace(ns))).To(Succeed())
	g.Expect(addresses.Items).To(HaveLen(n), "one IPAddress per claim")
	return result{claims: n, created: created, served: elapsed, writes: writes,
		cpu: measure.ProcessCPU(mgr.Process.Pid) - cpuBefore, peakRSS: measure.PeakRSS(mgr.Process.Pid)}
}

func newNamespace(t *testing.T, e *testenv.Env, name string) {
	t.Helper()
	NewWithT(t).Expect(e.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
}

// newPool creates the benchmark's pool in ns: a /16 named "pool", gateway 10.0.0.1.
func newPool(t *testing.T, e *testenv.Env, ns string) *ipamv1.IPPool {
	t.Helper()
	pool := &ipamv1.IPPool{
		ObjectMeta: metav1.ObjectMeta{Name: "pool", Namespace: ns},
		Spec: ipamv1.IPPoolSpec{
			NamePrefix: "scale", Prefix: 16, Gateway: ptr.To(ipamv1.IPAddressStr("10.0.0.1")),
			Pools: []ipamv1.Pool{{Subnet: ptr.To(ipamv1.IPSubnetStr("10.0.0.0/16"))}},
		},
	}
	NewWithT(t).Expect(e.Client.Create(context.Background(), pool)).To(Succeed())
	return pool
}

// watchServed counts the claims of ns whose status names an address.
func watchServed(ctx context.Context, t *testing.T, e *testenv.Env, ns string) *atomic.Int64 {
	t.Helper()
	g := NewWithT(t)
	c, err := cache.New(e.Config, cache.Options{Scheme: e.Scheme, DefaultNamespaces: map[string]cache.Config{ns: {}}})
	g.Expect(err).NotTo(HaveOccurred())
	inf, err := c.GetInformer(ctx, &ipamv1.IPClaim{})
	g.Expect(err).NotTo(HaveOccurred())
	var count atomic.Int64
	var mu sync.Mutex
	seen := map[string]bool{}
	note := func(o any) {
		claim, ok := o.(*ipamv1.IPClaim)
		if !ok || claim.Status.Address == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !seen[claim.Name] {
			seen[claim.Name] = true
			count.Add(1)
		}
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    note,
		UpdateFunc: func(_, o any) { note(o) },
	})
	g.Expect(err).NotTo(HaveOccurred())
	go func() { _ = c.Start(ctx) }()
	g.Expect(c.WaitForCacheSync(ctx)).To(BeTrue())
	return &count
}

// createClaims creates n IPClaims on pool "pool" of ns from 8 goroutines, as the anchors did.
// then, if not nil, is called by the same goroutine right after each claim is created.
func createClaims(ctx context.Context, e *testenv.Env, ns string, n int, then func(*ipamv1.IPClaim) error) error {
	var wg sync.WaitGroup
	var failed atomic.Value
	for w := range writers {
		wg.Go(func() {
			for i := w; i < n; i += writers {
				c := &ipamv1.IPClaim{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("claim-%d", i), Namespace: ns},
					Spec:       ipamv1.IPClaimSpec{Pool: corev1.ObjectReference{Name: "pool"}},
				}
				err := e.Client.Create(ctx, c)
				if err == nil && then != nil {
					err = then(c)
				}
				if err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	err, _ := failed.Load().(error)
	return err
}

// createOnly is the anchors' floor: the time to create n claims with no controller running.
func createOnly(t *testing.T, e *testenv.Env, n int) time.Duration {
	t.Helper()
	ctx := context.Background()
	ns := fmt.Sprintf("ipam-floor-%d", n)
	newNamespace(t, e, ns)
	busy := measure.MachineBusy()
	split := measure.CPUSplit(0)
	start := time.Now()
	if err := createClaims(ctx, e, ns, n, nil); err != nil {
		t.Fatalf("creating claims: %v", err)
	}
	took := time.Since(start)
	fmt.Printf("(create only, %d claims: machine CPU %.0f%% busy; CPU used: %s)\n", n, busy(), split())
	return took
}

// servers is how many writes the writes-alone floor keeps in flight once claims exist: as many
// as the manager's IPAM controller (ippool's default Workers).
const servers = 32

// writesAlone measures the floor of any IPAM that keeps the contract: the 8 writers create the
// claims, and as each is created, one of 32 goroutines gives it an IPAddress (as the manager
// makes it: named after the address, owned by the claim and the pool) and writes the status
// naming it; no controller, no cache, no watch. It returns the time taken, and the server
// floor: the CPU the API server and etcd spent on these writes, over the machine's cores. No
// IPAM making the same writes on this machine can finish sooner than that, however its clients
// are arranged. Watched, the benchmark holds informers on the kinds written while it writes
// (floorwatch.LikeAController): the floor of an IPAM that must also learn of every write.
func writesAlone(t *testing.T, e *testenv.Env, n int, watched bool) (took, serverFloor time.Duration) {
	t.Helper()
	ctx := context.Background()
	ns := fmt.Sprintf("ipam-writes-%d", n)
	newNamespace(t, e, ns)
	pool := newPool(t, e, ns)
	if watched {
		defer floorwatch.LikeAController(ctx, t, e, ns, &ipamv1.IPClaim{}, &ipamv1.IPAddress{}, &ipamv1.IPPool{})()
	}
	var next atomic.Uint32
	give := func(c *ipamv1.IPClaim) error {
		i := next.Add(1) + 1 // from 10.0.0.2, after the network address and the gateway
		ip := fmt.Sprintf("10.0.%d.%d", i/256, i%256)
		ref := func(kind, name string) corev1.ObjectReference {
			return corev1.ObjectReference{APIVersion: ipamv1.GroupVersion.String(), Kind: kind, Name: name, Namespace: ns}
		}
		a := &ipamv1.IPAddress{
			ObjectMeta: metav1.ObjectMeta{
				Name: ipamv1.IPAddressName("scale", ip), Namespace: ns,
				OwnerReferences: []metav1.OwnerReference{
					{APIVersion: ipamv1.GroupVersion.String(), Kind: "IPClaim", Name: c.Name, UID: c.UID,
						Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)},
					{APIVersion: ipamv1.GroupVersion.String(), Kind: "IPPool", Name: pool.Name, UID: pool.UID},
				},
			},
			Spec: ipamv1.IPAddressSpec{Claim: ref("IPClaim", c.Name), Pool: ref("IPPool", pool.Name),
				Address: ipamv1.IPAddressStr(ip), Prefix: 16, Gateway: pool.Spec.Gateway},
		}
		if err := e.Client.Create(ctx, a); err != nil {
			return err
		}
		c.Status.Address = &corev1.ObjectReference{Name: a.Name, Namespace: ns}
		c.Status.Conditions = []metav1.Condition{{Type: ipamv1.ReadyCondition, Status: metav1.ConditionTrue,
			Reason: ipamv1.AllocatedReason, Message: "holds IPAddress " + a.Name, LastTransitionTime: metav1.Now()}}
		return e.Client.Status().Update(ctx, c)
	}
	busy := measure.MachineBusy()
	split := measure.CPUSplit(0)
	start := time.Now()
	created := make(chan *ipamv1.IPClaim, n)
	var wg sync.WaitGroup
	var failed atomic.Value
	for range servers {
		wg.Go(func() {
			for c := range created {
				if err := give(c); err != nil {
					failed.Store(err)
				}
			}
		})
	}
	err := createClaims(ctx, e, ns, n, func(c *ipamv1.IPClaim) error {
		created <- c
		return nil
	})
	close(created)
	wg.Wait()
	if err == nil {
		err, _ = failed.Load().(error)
	}
	if err != nil {
		t.Fatalf("writing claims and addresses: %v", err)
	}
	took = time.Since(start)
	used := split()
	serverFloor = (used["kube-apiserver"] + used["etcd"]) / time.Duration(runtime.NumCPU())
	what := "writes alone"
	if watched {
		what += ", watched"
	}
	fmt.Printf("(%s, %d claims: machine CPU %.0f%% busy; CPU used: %s)\n", what, n, busy(), used)
	return took, serverFloor
}

// managerProfilerAddress is where the manager serves pprof when IPAM_SCALE_PROFILE is set.
const managerProfilerAddress = "127.0.0.1:16060"

// profileCPU records CPU profiles of the API server and the manager into dir while claims are
// served (IPAM_SCALE_PROFILE_SECONDS, default 10), for `go tool pprof`. The returned function
// waits for both.
func profileCPU(t *testing.T, e *testenv.Env, dir string, n int) func() {
	t.Helper()
	seconds := os.Getenv("IPAM_SCALE_PROFILE_SECONDS")
	if seconds == "" {
		seconds = "10"
	}
	rc := rawClient(t, e)
	var wg sync.WaitGroup
	wg.Go(func() {
		body, err := rc.Get().AbsPath("/debug/pprof/profile").Param("seconds", seconds).DoRaw(context.Background())
		if err != nil {
			t.Logf("API server profile: %v", err)
			return
		}
		_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("apiserver-%d.pprof", n)), body, 0o600)
	})
	wg.Go(func() {
		resp, err := http.Get("http://" + managerProfilerAddress + "/debug/pprof/profile?seconds=" + seconds)
		if err != nil {
			t.Logf("manager profile: %v", err)
			return
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Logf("manager profile: %v (HTTP %d)", err, resp.StatusCode)
			return
		}
		_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("manager-%d.pprof", n)), body, 0o600)
	})
	return wg.Wait
}

// rawClient talks to the API server's non-API paths (/metrics, /debug/pprof).
func rawClient(t *testing.T, e *testenv.Env) *rest.RESTClient {
	t.Helper()
	cfg := rest.CopyConfig(e.Config)
	cfg.GroupVersion = &schema.GroupVersion{}
	cfg.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	cfg.Timeout = 5 * time.Minute
	rc, err := rest.RESTClientFor(cfg)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return rc
}

// ipamWrites is the API server's count of write requests to the ipam.metal3.io kinds so far.
func ipamWrites(t *testing.T, e *testenv.Env) int64 {
	t.Helper()
	w, err := measure.APIWrites(context.Background(), e.Config)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return w.Only("ippools", "ipclaims", "ipaddresses").Total()
}
