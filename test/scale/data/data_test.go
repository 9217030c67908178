package data

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/ippool"
	"github.com/metalwire/metalwire/internal/controller/metal3data"
	"github.com/metalwire/metalwire/internal/controller/metal3dataclaim"
	"github.com/metalwire/metalwire/internal/controller/metal3datatemplate"
	"github.com/metalwire/metalwire/pkg/render"
)

const (
	// writers is how many goroutines create objects, as a MachineDeployment scaling up would.
	writers = 8
	ns      = "bench-data"
)

// benchTemplate takes an address from each of two pools for metaData and network data.
const benchTemplate = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3DataTemplate
metadata: {name: workers}
spec:
  metaData:
    ipAddressesFromPool: [{key: provisioningIP, name: prov}, {key: externalIP, name: ext}]
    indexes: [{key: hostname, prefix: worker-}]
    objectNames: [{key: local-hostname, object: machine}]
  networkData:
    links:
      ethernets:
        - {type: phy, id: eth0, macAddress: {fromHostInterface: eth0}}
        - {type: phy, id: eth1, macAddress: {fromHostInterface: eth1}}
    networks:
      ipv4:
        - {id: prov, link: eth0, ipAddressFromIPPool: prov}
        - id: ext
          link: eth1
          ipAddressFromIPPool: ext
          routes: [{network: 0.0.0.0, gateway: {fromIPPool: ext}}]
`

// TestDataScale creates N claims (BENCH_DATA_N, default 1000) on one template with two /16
// pools and waits for every Metal3Data to be rendered.
func TestDataScale(t *testing.T) {
	n := 1000
	if s := os.Getenv("BENCH_DATA_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			t.Fatalf("BENCH_DATA_N: %q is not a positive number", s)
		}
		n = v
	}
	// The manager's default --concurrency; BENCH_DATA_CONCURRENCY to try others.
	concurrency := 10
	if s := os.Getenv("BENCH_DATA_CONCURRENCY"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			t.Fatalf("BENCH_DATA_CONCURRENCY: %q is not a positive number", s)
		}
		concurrency = v
	}
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())

	fmt.Printf("\ndata templating at scale: %d claims on one Metal3DataTemplate with two IP pools, --concurrency=%d\n", n, concurrency)
	setup := time.Now()
	createPool(t, "prov", "10.10.0.1", "10.10.255.254", "")
	createPool(t, "ext", "10.20.0.1", "10.20.255.254", "10.20.0.254")
	decoded, err := render.DecodeTemplate([]byte(benchTemplate))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Create(ctx, &infrav1.Metal3DataTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "workers"},
		Spec:       infrav1.Metal3DataTemplateSpec{ClusterName: "bench", MetaData: decoded.MetaData, NetworkData: decoded.NetworkData},
	})).To(Succeed())
	m3ms := make([]*infrav1.Metal3Machine, n)
	parallel(t, n, "hosts, Machines and Metal3Machines", func(i int) error {
		var err error
		m3ms[i], err = createMachine(ctx, i)
		return err
	})
	fmt.Printf("  setup done in %.1fs\n", time.Since(setup).Seconds())

	startManager(ctx, t, concurrency)
	before := apiWrites(t)
	start := time.Now()
	parallel(t, n, "Metal3DataClaims (the machine controller's part)", func(i int) error {
		return createClaim(ctx, m3ms[i])
	})
	created := time.Since(start)
	waitAllReady(t, n, start)
	elapsed := time.Since(start)
	// Let the last status writes land before counting.
	time.Sleep(2 * time.Second)
	writes := apiWrites(t).minus(before)

	total := writes.total()
	fmt.Printf("\n%8s %12s %14s %10s %16s %22s\n", "claims", "created in", "all ready in", "claims/s", "writes/claim", "writes/claim (ctrl)")
	fmt.Printf("%8d %11.2fs %13.2fs %10.1f %16.2f %22.2f\n", n, created.Seconds(), elapsed.Seconds(),
		float64(n)/elapsed.Seconds(), float64(total)/float64(n), float64(total-int64(n))/float64(n))
	fmt.Printf("\nmean time the API server took per write: %s (the machine's load shows here)\n", writes.meanWriteLatency().Round(time.Millisecond))
	fmt.Println("\nAPI writes during the run, per claim (the claims themselves are the test's):")
	writes.print(n)
}

func createPool(t *testing.T, name, start, end, gateway string) {
	t.Helper()
	s, e := ipamv1.IPAddressStr(start), ipamv1.IPAddressStr(end)
	p := &ipamv1.IPPool{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       ipamv1.IPPoolSpec{NamePrefix: name, Pools: []ipamv1.Pool{{Start: &s, End: &e}}, Prefix: 16},
	}
	if gateway != "" {
		gw := ipamv1.IPAddressStr(gateway)
		p.Spec.Gateway = &gw
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), p)).To(Succeed())
}

// createMachine creates host-i (inspected, two NICs), Machine m-i and Metal3Machine m-i holding
// the host, as the machine controller would have left them.
func createMachine(ctx context.Context, i int) (*infrav1.Metal3Machine, error) {
	name := fmt.Sprintf("m-%d", i)
	h := &bmov1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("host-%d", i)},
		Spec:       bmov1.BareMetalHostSpec{Online: true},
	}
	if err := env.Client.Create(ctx, h); err != nil {
		return nil, err
	}
	h.Status.HardwareDetails = &bmov1.HardwareDetails{NIC: []bmov1.NIC{
		{Name: "eth0", MAC: fmt.Sprintf("52:54:00:00:%02x:%02x", i/256, i%256)},
		{Name: "eth1", MAC: fmt.Sprintf("52:54:00:01:%02x:%02x", i/256, i%256)},
	}}
	if err := env.Client.Status().Update(ctx, h); err != nil {
		return nil, err
	}
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: "bench"}},
		Spec: clusterv1.MachineSpec{
			ClusterName: "bench",
			Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To(name + "-bootstrap")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Machine", Name: name,
			},
		},
	}
	if err := env.Client.Create(ctx, m); err != nil {
		return nil, err
	}
	m3m := &infrav1.Metal3Machine{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: "bench"},
			Annotations:     map[string]string{infrav1.HostAnnotation: ns + "/" + h.Name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: m.Name, UID: m.UID}},
		},
		Spec: infrav1.Metal3MachineSpec{
			Image:        infrav1.Image{URL: "http://images.example.com/ubuntu.qcow2", Checksum: "0123456789abcdef"},
			DataTemplate: &corev1.ObjectReference{Name: "workers"},
		},
	}
	return m3m, env.Client.Create(ctx, m3m)
}

func createClaim(ctx context.Context, m3m *infrav1.Metal3Machine) error {
	return env.Client.Create(ctx, &infrav1.Metal3DataClaim{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: m3m.Name,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: "bench"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3Machine", Name: m3m.Name, UID: m3m.UID}},
		},
		Spec: infrav1.Metal3DataClaimSpec{Template: corev1.ObjectReference{Name: "workers"}},
	})
}

// parallel runs fn for 0..n-1 from the writers, printing a line when done.
func parallel(t *testing.T, n int, what string, fn func(i int) error) {
	t.Helper()
	start := time.Now()
	var (
		next atomic.Int64
		wg   sync.WaitGroup
		errs = make(chan error, writers)
	)
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("creating %s: %v", what, err)
	}
	fmt.Printf("  created %d %s in %.1fs\n", n, what, time.Since(start).Seconds())
}

// startManager runs the IPAM and data-templating controllers in this process, as
// `metalwire manager` sets them up.
func startManager(ctx context.Context, t *testing.T, concurrency int) {
	t.Helper()
	g := NewWithT(t)
	// Errors only: a thousand "rendered" lines would bury the figures.
	ctrl.SetLogger(zap.New(zap.Level(zapcore.ErrorLevel)))
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 1000, 2000
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect((&ippool.Reconciler{}).SetupWithManager(ctx, mgr, concurrency)).To(Succeed())
	g.Expect((&metal3datatemplate.Reconciler{Client: mgr.GetClient()}).SetupWithManager(ctx, mgr, concurrency)).To(Succeed())
	g.Expect((&metal3dataclaim.Reconciler{Client: mgr.GetClient()}).SetupWithManager(ctx, mgr, concurrency)).To(Succeed())
	g.Expect((&metal3data.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader()}).SetupWithManager(ctx, mgr, concurrency)).To(Succeed())
	go func() {
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	g.Expect(mgr.GetCache().WaitForCacheSync(ctx)).To(BeTrue())
}

// waitAllReady polls until every Metal3Data is rendered, printing progress every few seconds.
func waitAllReady(t *testing.T, n int, start time.Time) {
	t.Helper()
	deadline := start.Add(20 * time.Minute)
	lastPrint := time.Now()
	for {
		list := &infrav1.Metal3DataList{}
		if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		ready := 0
		for _, d := range list.Items {
			if d.Status.Ready {
				ready++
			}
		}
		if ready == n {
			return
		}
		if time.Since(lastPrint) > 5*time.Second {
			// Where the rendering waits: for the template (Metal3Data), the IPAM controller
			// (claims without an address) or the data controller (addressed, not rendered).
			claims := &ipamv1.IPClaimList{}
			if err := env.Client.List(context.Background(), claims, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			served := 0
			for _, c := range claims.Items {
				if c.Status.Address != nil {
					served++
				}
			}
			fmt.Printf("  %6.1fs: %d Metal3Data, %d ready; %d IPClaims, %d with an address\n",
				time.Since(start).Seconds(), len(list.Items), ready, len(claims.Items), served)
			lastPrint = time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s only %d of %d Metal3Data are ready", time.Since(start), ready, n)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// writeCounts are apiserver_request_total counters of write verbs, by resource, plus the sum and
// count of their durations (under latencySumKey and latencyCountKey).
type writeCounts map[string]int64

// The keys of the write latency in writeCounts; they are not writes.
const (
	latencySumKey   = "(write latency sum, ms)"
	latencyCountKey = "(write latency count)"
)

// meanWriteLatency is the API server's mean time to serve a write.
func (w writeCounts) meanWriteLatency() time.Duration {
	if w[latencyCountKey] == 0 {
		return 0
	}
	return time.Duration(float64(w[latencySumKey]) / float64(w[latencyCountKey]) * float64(time.Millisecond))
}

var writeVerbs = map[string]bool{"POST": true, "PUT": true, "PATCH": true, "DELETE": true, "APPLY": true}

// apiWrites reads the API server's apiserver_request_total and sums the writes per
// resource/subresource/verb.
func apiWrites(t *testing.T) writeCounts {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.GroupVersion = &schema.GroupVersion{}
	cfg.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	rc, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	body, err := rc.Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("reading the API server's metrics: %v", err)
	}
	out := writeCounts{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, m := range []struct{ prefix, key string }{
			{"apiserver_request_duration_seconds_sum{", latencySumKey},
			{"apiserver_request_duration_seconds_count{", latencyCountKey},
		} {
			if !strings.HasPrefix(line, m.prefix) {
				continue
			}
			labels := parseLabels(line[len(m.prefix):strings.LastIndex(line, "}")])
			if !writeVerbs[labels["verb"]] {
				continue
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(line[strings.LastIndex(line, " "):]), 64)
			if err == nil {
				// Milliseconds, so that the counter stays an integer.
				if m.key == latencySumKey {
					v *= 1000
				}
				out[m.key] += int64(v)
			}
		}
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		labels := parseLabels(line[len("apiserver_request_total{"):strings.LastIndex(line, "}")])
		if !writeVerbs[labels["verb"]] {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[strings.LastIndex(line, " "):]), 64)
		if err != nil {
			continue
		}
		key := labels["resource"]
		if labels["subresource"] != "" {
			key += "/" + labels["subresource"]
		}
		key += " " + labels["verb"]
		out[key] += int64(v)
	}
	return out
}

func parseLabels(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok {
			out[k] = strings.Trim(v, `"`)
		}
	}
	return out
}

func (w writeCounts) minus(before writeCounts) writeCounts {
	out := writeCounts{}
	for k, v := range w {
		if d := v - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

func (w writeCounts) total() int64 {
	var sum int64
	for k, v := range w {
		if k != latencySumKey && k != latencyCountKey {
			sum += v
		}
	}
	return sum
}

func (w writeCounts) print(n int) {
	keys := make([]string, 0, len(w))
	for k := range w {
		if k != latencySumKey && k != latencyCountKey {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("  %-40s %8d  %6.2f\n", k, w[k], float64(w[k])/float64(n))
	}
}
