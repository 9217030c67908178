package fabric

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller"
	"github.com/metalwire/metalwire/internal/manager"
	"github.com/metalwire/metalwire/internal/switchdriver"
	"github.com/metalwire/metalwire/internal/switchdriver/openvswitch"
	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
	"github.com/metalwire/metalwire/pkg/fabric"
	"github.com/metalwire/metalwire/test/scale/measure"
)

const (
	ns = "bench-fabric"
	// writers is how many goroutines select hosts, as Metal3Machines of a scaling
	// MachineDeployment would.
	writers = 8
)

// TestFabricScale: every host joins the ClusterNetwork at once (its NIC labelled selected, as
// the Metal3Machine controller does); the clock runs until every host's state is ready.
func TestFabricScale(t *testing.T) {
	ovstest.Require(t, "ovsdb-server", "ovsdb-tool", "ovs-vsctl")
	hosts := envInt(t, "FABRIC_BENCH_HOSTS", 1000)
	switches := envInt(t, "FABRIC_BENCH_SWITCHES", 20)
	fabricConcurrency := envInt(t, "FABRIC_BENCH_CONCURRENCY", manager.NewOptions().FabricConcurrency) // the image's default
	const cardsPerHost = 2
	// FABRIC_BENCH_LAG=1: each host's two cards on one switch, bonded with LACP (one network of
	// linkAggregation 2) rather than two networks of a card each.
	bonded := os.Getenv("FABRIC_BENCH_LAG") == "1"
	// FABRIC_BENCH_ACL=1: every network has a two-rule access list (benchACL), written as
	// OpenFlow flows: each switch then runs an ovs-vswitchd too, its ports dummy interfaces.
	withACL := os.Getenv("FABRIC_BENCH_ACL") == "1"
	// FABRIC_BENCH_VSWITCHD=1: each switch runs an ovs-vswitchd without access lists too, as a
	// real Open vSwitch does, so that a run of part 1 pays the same switches' own CPU for
	// applying what it is sent (on the same two cores) as a run with lists, which needs them.
	withVSwitchd := withACL || os.Getenv("FABRIC_BENCH_VSWITCHD") == "1"
	portsPerSwitch := (hosts*cardsPerHost + switches - 1) / switches
	if bonded {
		portsPerSwitch = (hosts + switches - 1) / switches * cardsPerHost
	}
	// cable says which switch and which of its ports card c of host h is cabled to.
	cable := func(h, c int) (sw, port int) {
		if bonded {
			return h % switches, h/switches*cardsPerHost + c
		}
		k := h*cardsPerHost + c
		return k % switches, k / switches
	}
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	shape := "one ClusterNetwork of two networks"
	if bonded {
		shape = "one ClusterNetwork of one network, each host's two cards one LACP bond"
	}
	servers := "ovsdb-servers"
	if withACL {
		shape += fmt.Sprintf(", a %d-rule access list on each network", len(benchACL))
	}
	if withVSwitchd {
		servers = "ovsdb-servers and ovs-vswitchds"
	}
	fmt.Printf("\nfabric at scale: %d hosts x %d NICs on %d %s (%d ports each), %s, --fabric-concurrency=%d\n",
		hosts, cardsPerHost, switches, servers, portsPerSwitch, shape, fabricConcurrency)
	setup := time.Now()
	fleet := ovstest.StartFleetWith(t, switches, portsPerSwitch, ovstest.FleetOptions{VSwitchd: withVSwitchd})
	fmt.Printf("  %d %s started in %.1fs\n", switches, servers, time.Since(setup).Seconds())

	g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	nd := &netv1.NetworkDevice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fabric"}}
	for i, s := range fleet.Switches {
		sw := netv1.Switch{Name: switchName(i), Address: s.TCPRemote, NetworkOS: netv1.NetworkOSOpenvSwitch, Bridge: fleet.Bridges[i]}
		if withACL { // the OVSDB remote is TCP, so the bridge's OpenFlow endpoint is named
			sw.OpenFlowRemote = s.MgmtRemote(fleet.Bridges[i])
		}
		nd.Spec.Switches = append(nd.Spec.Switches, sw)
	}
	g.Expect(env.Client.Create(ctx, nd)).To(Succeed())
	// Card k of the fleet (host k/2, its card k%2) is cabled to switch k%switches, port
	// k/switches; bonded, both cards of host h to switch h%switches.
	measure.Parallel(t, writers, hosts, func(h int) error {
		nic := &netv1.NIC{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: hostName(h)}, Spec: netv1.NICSpec{Node: hostName(h), NetworkDeviceRef: nd.Name}}
		for c := 0; c < cardsPerHost; c++ {
			sw, port := cable(h, c)
			nic.Spec.NICs = append(nic.Spec.NICs, netv1.HostNIC{
				NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: switchName(sw), Port: intstr.FromString(fleet.Ports[sw][port])}},
				Capability:    netv1.NICCapability{Speed: 10000},
			})
		}
		return env.Client.Create(ctx, nic)
	})
	networks := []netv1.Network{
		{Name: "control", NICHint: netv1.NICHint{Speed: 1000}},
		{Name: "data", NICHint: netv1.NICHint{Speed: 1000}},
	}
	if bonded {
		networks = []netv1.Network{{Name: "control", NICHint: netv1.NICHint{Speed: 1000}, LinkAggregation: cardsPerHost, LAG: &netv1.LAG{Mode: netv1.LAGLACP, LACPRate: netv1.LACPSlow}}}
	}
	if withACL {
		for i := range networks {
			networks[i].ACL = benchACL
		}
	}
	g.Expect(env.Client.Create(ctx, &netv1.ClusterNetwork{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bench"},
		Spec:       netv1.ClusterNetworkSpec{NetworkDeviceRef: nd.Name, VLANRange: "1000-1999", Networks: networks},
	})).To(Succeed())

	// The floor, on the same API server before any controller runs: the writes every host needs
	// (a read and a label patch of its selection, then its NIC status, as the controller writes
	// it), by the same writers. Every host is ready only after both, so no controller can beat
	// this. The statuses are cleared again before the manager starts, off the clock.
	floorStatus := netv1.NICStatus{ClusterNetwork: "floor", NICs: []*netv1.NICAssignment{
		{Network: "control", VLANID: 1000, PortMode: netv1.PortModeAccess},
		{Network: "data", VLANID: 1001, PortMode: netv1.PortModeAccess},
	}}
	if bonded {
		lag := &netv1.CardLAG{Name: "lag0000000000", Mode: netv1.LAGLACP, LACPRate: netv1.LACPSlow}
		floorStatus.NICs = []*netv1.NICAssignment{
			{Network: "control", VLANID: 1000, PortMode: netv1.PortModeAccess, LAG: lag},
			{Network: "control", VLANID: 1000, PortMode: netv1.PortModeAccess, LAG: lag},
		}
	}
	if withACL {
		for _, a := range floorStatus.NICs {
			a.ACLs = cardACLs(a.Network)
		}
	}
	setStatus := func(h int, from, to netv1.NICStatus) error {
		nic := &netv1.NIC{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: hostName(h)}, Status: from}
		base := nic.DeepCopy()
		nic.Status = to
		return env.Client.Status().Patch(ctx, nic, client.MergeFrom(base))
	}
	floorSplit := measure.CPUSplit(0)
	floorStart := time.Now()
	measure.Parallel(t, writers, hosts, func(h int) error {
		nic := &netv1.NIC{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: hostName(h)}, nic); err != nil {
			return err
		}
		base := nic.DeepCopy()
		nic.Labels = map[string]string{"bench.metalwire.io/floor": "1"}
		if err := env.Client.Patch(ctx, nic, client.MergeFrom(base)); err != nil {
			return err
		}
		return setStatus(h, netv1.NICStatus{}, floorStatus)
	})
	floor := time.Since(floorStart)
	floorUsed := floorSplit()
	measure.Parallel(t, writers, hosts, func(h int) error { return setStatus(h, floorStatus, netv1.NICStatus{}) })

	drv := openvswitch.New()
	t.Cleanup(drv.CloseIdle)
	counter := &countingDriver{Driver: drv, perSwitch: map[string]*switchCounts{}}
	reg := &switchdriver.Registry{}
	reg.Register(counter)
	writes := &writeCounter{}
	startManager(ctx, t, reg, fabricConcurrency, writes)
	g.Eventually(func(g Gomega) {
		cn := getCN(g)
		g.Expect(cn.Status.Available).To(HaveLen(hosts), "every host available before the clock starts")
		g.Expect(cn.Status.Networks).To(HaveLen(len(networks)))
	}, 10*time.Minute, time.Second).Should(Succeed())
	fmt.Printf("  setup done in %.1fs: %d NICs, every host available\n", time.Since(setup).Seconds(), hosts)
	counter.reset()
	writes.reset()

	cpuBefore := measure.ProcessCPU(os.Getpid())
	split := measure.CPUSplit(0)
	switchesUsed := switchCPU()
	busy := measure.MachineBusy()
	peak := measure.WatchPeakHeap(ctx)
	profiled := measure.ProfileAPIServer(ctx, t, env.Config, os.Getenv("FABRIC_BENCH_APISERVER_PROFILE"), 15)
	stopProfile := profileManager(t, os.Getenv("FABRIC_BENCH_MANAGER_PROFILE"))
	start := time.Now()
	measure.Parallel(t, writers, hosts, func(h int) error {
		nic := &netv1.NIC{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: hostName(h)}, nic); err != nil {
			return err
		}
		base := nic.DeepCopy()
		nic.Labels = map[string]string{netv1.SelectedForLabel: "bench"}
		return env.Client.Patch(ctx, nic, client.MergeFrom(base))
	})
	selectedIn := time.Since(start)
	waitAllReady(t, hosts, start)
	elapsed := time.Since(start)
	stopProfile()
	cpu := measure.ProcessCPU(os.Getpid()) - cpuBefore
	used := split()
	switchesCPU := switchesUsed()
	profiled()
	machineBusy := busy()
	peakHeap := peak()
	managerWrites := writes.snapshot()

	// Every port carries its network: read back from each switch itself, not from our status.
	cn := getCN(g)
	vlanOf := map[string]int{}
	for _, n := range cn.Status.Networks {
		vlanOf[n.Name] = int(n.VLANID)
	}
	for i, s := range fleet.Switches {
		rows := s.Ports(t)
		if bonded { // each host's bond, on its switch, in the network's VLAN
			for h := i; h < hosts; h += switches {
				if name := fabric.LAGName(hostName(h), "control"); rows[name].Tag != vlanOf["control"] {
					t.Fatalf("switch %s bond %s (host %s) has tag %d, want %d", switchName(i), name, hostName(h), rows[name].Tag, vlanOf["control"])
				}
			}
			continue
		}
		for j, p := range fleet.Ports[i] {
			k := j*switches + i
			if k >= hosts*cardsPerHost {
				continue
			}
			want := vlanOf["control"]
			if k%cardsPerHost == 1 {
				want = vlanOf["data"]
			}
			if rows[p].Tag != want {
				t.Fatalf("switch %s port %s (host %s card %d) has tag %d, want %d", switchName(i), p, hostName(k/cardsPerHost), k%cardsPerHost, rows[p].Tag, want)
			}
		}
	}

	// Every host's list is on its switch: read back with ovs-ofctl from each switch itself.
	var acls []aclCounts
	if withACL {
		var lists []hostList
		for h := 0; h < hosts; h++ {
			if bonded {
				sw, first := cable(h, 0)
				lists = append(lists, hostList{host: hostName(h), network: "control", sw: sw, ports: fleet.Ports[sw][first : first+cardsPerHost]})
				continue
			}
			for c, n := range []string{"control", "data"} {
				sw, port := cable(h, c)
				lists = append(lists, hostList{host: hostName(h), network: n, sw: sw, ports: fleet.Ports[sw][port : port+1]})
			}
		}
		acls = checkACLFlows(t, fleet, lists)
		if !t.Failed() {
			fmt.Printf("\nevery host's access list is on its switch: %d lists, each port's ssh drop above its allow, read back with ovs-ofctl\n", len(lists))
		}
	}

	fmt.Printf("\n%8s %9s %12s %14s %12s %14s %14s %12s\n", "hosts", "switches", "selected in", "all ready in", "hosts/s", "manager CPU", "peak heap", "max RSS")
	fmt.Printf("%8d %9d %11.2fs %13.2fs %12.0f %13.2fs %10.0f MiB %8.0f MiB\n", hosts, switches, selectedIn.Seconds(), elapsed.Seconds(),
		float64(hosts)/elapsed.Seconds(), cpu.Seconds(), float64(peakHeap)/(1<<20), float64(measure.PeakRSS(os.Getpid()))/(1<<20))
	fmt.Printf("floor: the %d selections and NIC statuses alone, no controller running, %d writers: %.2fs, API server and etcd CPU %.2fs; all ready in %.2fx the floor, server CPU %.2fx the floor's\n",
		hosts, writers, floor.Seconds(), floorUsed.Server().Seconds(), elapsed.Seconds()/floor.Seconds(), used.Server().Seconds()/floorUsed.Server().Seconds())
	fmt.Printf("CPU over the run: %s (benchmark: the manager and the selection's writers); the %d switches: %s; machine %.0f%% busy\n", used, switches, cpuByName(switchesCPU), machineBusy)
	fmt.Printf("manager API writes: %d, %.2f per host (%s)\n", managerWrites.total(), float64(managerWrites.total())/float64(hosts), managerWrites)
	fmt.Printf("objects the status writes rewrite in whole, at the end: %s\n", objectSizes(t, cn, nd))
	if withACL {
		fmt.Println("\nper switch: ports configured, sessions opened, batches applied (of them with list changes), changes sent (OVSDB transactions and OpenFlow bundles, as the driver counts them together), flows and lists of metalwire's cookie at the end (ovs-ofctl)")
	} else {
		fmt.Println("\nper switch: ports configured, sessions opened, batches applied, OVSDB transactions sent")
	}
	var txns []int
	for i := range fleet.Switches {
		c := counter.get(switchName(i))
		if withACL {
			fmt.Printf("  %-6s %5d ports %5d sessions %4d batches (%4d with lists) %4d changes %6d flows %4d lists\n", switchName(i), min(portsPerSwitch, hosts*cardsPerHost),
				c.sessions.Load(), c.batches.Load(), c.aclBatches.Load(), c.txns.Load(), acls[i].flows, acls[i].lists)
			// At most one OVSDB transaction a batch, and one bundle a batch that changes lists.
			if c.txns.Load() > c.batches.Load()+c.aclBatches.Load() {
				t.Errorf("switch %s: %d changes for %d batches, %d of them with lists; want at most one transaction a batch and one bundle a batch with lists", switchName(i), c.txns.Load(), c.batches.Load(), c.aclBatches.Load())
			}
		} else {
			fmt.Printf("  %-6s %5d ports %5d sessions %4d batches %4d transactions\n", switchName(i), min(portsPerSwitch, hosts*cardsPerHost), c.sessions.Load(), c.batches.Load(), c.txns.Load())
			if c.txns.Load() != c.batches.Load() {
				t.Errorf("switch %s: %d transactions for %d batches; want one transaction per batch", switchName(i), c.txns.Load(), c.batches.Load())
			}
		}
		txns = append(txns, int(c.txns.Load()))
	}
	slices.Sort(txns)
	what := "transactions"
	if withACL {
		what = "changes (transactions and bundles)"
	}
	fmt.Printf("%s per switch: min %d, median %d, max %d, for %d ports each: they follow the batches (reconciles), not the hosts\n",
		what, txns[0], txns[len(txns)/2], txns[len(txns)-1], portsPerSwitch)
	fmt.Printf("manager CPU is this test process's (the controllers, and the %d label patches of the selection) over the run; load average: %s\n", hosts, loadAverage())
	if portsPerSwitch >= 20 && txns[len(txns)-1] >= portsPerSwitch {
		t.Errorf("a switch got %d %s for %d ports: one per host, not one per batch", txns[len(txns)-1], what, portsPerSwitch)
	}
}

// profileManager writes a CPU profile of this process (the manager's controllers, and the
// selection's writers) to path until the returned function is called: where the manager's CPU
// goes over the run, not the setup. An empty path profiles nothing.
func profileManager(t *testing.T, path string) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatalf("profiling the manager: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		t.Fatalf("profiling the manager: %v", err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			t.Errorf("writing the manager's profile: %v", err)
		}
	}
}

// startManager runs the fabric controllers in this process as `metalwire manager
// --controllers=fabric` builds them (manager.New), with the counting driver.
func startManager(ctx context.Context, t *testing.T, reg *switchdriver.Registry, fabricConcurrency int, writes *writeCounter) {
	t.Helper()
	g := NewWithT(t)
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(writes.wrap)
	o := manager.NewOptions()
	o.RestConfig, o.Scheme, o.QPS, o.Burst = cfg, env.Scheme, 1000, 2000
	o.MetricsAddr, o.ProbeAddr, o.WebhookPort, o.LeaderElect, o.SkipNameValidation = "0", "0", 0, false, true
	o.WatchNamespace, o.Concurrency, o.FabricConcurrency, o.SwitchDrivers = ns, 10, fabricConcurrency, reg
	mgr, err := manager.New(ctx, o, []controller.Group{controller.Fabric})
	g.Expect(err).NotTo(HaveOccurred())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("manager: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Log("the manager did not stop within 30s")
		}
	})
	g.Expect(mgr.GetCache().WaitForCacheSync(ctx)).To(BeTrue())
}

// waitAllReady watches the ClusterNetwork until every host's state is ready, printing progress
// every few seconds. A watch, not a poll: reading a status of a thousand hosts ten times a
// second would load the API server this benchmark measures (a user waits with kubectl get -w).
func waitAllReady(t *testing.T, n int, start time.Time) {
	t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	lastPrint := time.Now()
	ready := func(cn *netv1.ClusterNetwork) bool {
		counts := map[netv1.HostState]int{}
		var lastError string
		for _, s := range cn.Status.States {
			counts[s.State]++
			if s.State == netv1.HostError {
				lastError = s.Message
			}
		}
		if counts[netv1.HostReady] == n {
			return true
		}
		if time.Since(lastPrint) > 2*time.Second {
			fmt.Printf("  %6.1fs: %d selected, %d configuring, %d ready, %d error %s\n", time.Since(start).Seconds(),
				len(cn.Status.Selected), counts[netv1.HostConfiguring], counts[netv1.HostReady], counts[netv1.HostError], lastError)
			lastPrint = time.Now()
		}
		return false
	}
	for {
		list := &netv1.ClusterNetworkList{}
		byName := client.MatchingFields{"metadata.name": "bench"}
		if err := wc.List(ctx, list, client.InNamespace(ns), byName); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) == 1 && ready(&list.Items[0]) {
			return
		}
		w, err := wc.Watch(ctx, &netv1.ClusterNetworkList{}, client.InNamespace(ns), byName, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
		if err != nil {
			t.Fatal(err)
		}
		for ev := range w.ResultChan() {
			if cn, ok := ev.Object.(*netv1.ClusterNetwork); ok && ready(cn) {
				w.Stop()
				return
			}
		}
		w.Stop()
		if ctx.Err() != nil {
			t.Fatalf("after %s not every one of %d hosts is ready", time.Since(start), n)
		}
		// The watch closed (the server ends watches now and then): list again and go on.
	}
}

// countingDriver counts, per switch, the sessions opened, the non-empty batches applied and the
// OVSDB transactions the driver sent for them. It embeds the driver itself, not the
// fabric.Driver interface, so the controller still sees what it can do (access lists, port
// state, MTU).
type countingDriver struct {
	openvswitch.Driver
	mu        sync.Mutex
	perSwitch map[string]*switchCounts
}

// txns counts what Session.Changes counts: OVSDB transactions, and OpenFlow bundles and
// port-mods; aclBatches the batches that change access lists.
type switchCounts struct{ sessions, batches, aclBatches, txns atomic.Int64 }

func (d *countingDriver) get(sw string) *switchCounts {
	d.mu.Lock()
	defer d.mu.Unlock()
	c, ok := d.perSwitch[sw]
	if !ok {
		c = &switchCounts{}
		d.perSwitch[sw] = c
	}
	return c
}

func (d *countingDriver) reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.perSwitch = map[string]*switchCounts{}
}

func (d *countingDriver) Connect(ctx context.Context, ep fabric.Endpoint) (fabric.Session, error) {
	sess, err := d.Driver.Connect(ctx, ep)
	if err != nil {
		return nil, err
	}
	c := d.get(ep.Switch)
	c.sessions.Add(1)
	return &countingSession{Session: sess, counts: c}, nil
}

type countingSession struct {
	fabric.Session
	counts *switchCounts
}

func (s *countingSession) Apply(ctx context.Context, b fabric.Batch) error {
	inner := s.Session.(*openvswitch.Session)
	before := inner.Changes()
	err := s.Session.Apply(ctx, b)
	if len(b) > 0 {
		s.counts.batches.Add(1)
	}
	if slices.ContainsFunc(b, func(c fabric.Change) bool { return c.Op == fabric.OpEnsureACL || c.Op == fabric.OpRemoveACL }) {
		s.counts.aclBatches.Add(1)
	}
	s.counts.txns.Add(int64(inner.Changes() - before))
	return err
}

func getCN(g Gomega) *netv1.ClusterNetwork {
	cn := &netv1.ClusterNetwork{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "bench"}, cn)).To(Succeed())
	return cn
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return string(b[:len(b)-1])
}

// objectSizes reports the JSON size of the ClusterNetwork and NetworkDevice as stored, and how
// much of it is managedFields: the API server decodes, validates and re-encodes the whole
// object on every status patch, so their size times their writes is most of its work.
func objectSizes(t *testing.T, objs ...client.Object) string {
	t.Helper()
	parts := make([]string, 0, len(objs))
	for _, o := range objs {
		fresh := o.DeepCopyObject().(client.Object)
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(o), fresh); err != nil {
			t.Fatal(err)
		}
		all, err := json.Marshal(fresh)
		if err != nil {
			t.Fatal(err)
		}
		mf, err := json.Marshal(fresh.GetManagedFields())
		if err != nil {
			t.Fatal(err)
		}
		kind := reflect.TypeOf(fresh).Elem().Name()
		parts = append(parts, fmt.Sprintf("%s %.0f KiB (managedFields %.0f KiB)", kind, float64(len(all))/1024, float64(len(mf))/1024))
	}
	return strings.Join(parts, ", ")
}

func switchName(i int) string { return fmt.Sprintf("leaf%02d", i) }
func hostName(i int) string   { return fmt.Sprintf("host%04d", i) }

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}
