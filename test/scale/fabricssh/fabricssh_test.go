package fabricssh

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller"
	"github.com/metalwire/metalwire/internal/manager"
	"github.com/metalwire/metalwire/internal/manager/managertest"
	"github.com/metalwire/metalwire/internal/switchdriver/sshcli"
	"github.com/metalwire/metalwire/internal/switchdriver/vendorssh"
	"github.com/metalwire/metalwire/internal/switchtest/vendortest"
	"github.com/metalwire/metalwire/pkg/fabric"
	"github.com/metalwire/metalwire/test/scale/measure"
)

const cardsPerHost = 2

// writers is how many goroutines create and select hosts, as Metal3Machines of a scaling
// MachineDeployment would.
const writers = 8

func TestFabricSSHScale(t *testing.T) {
	hosts := envInt(t, "FABRIC_SSH_BENCH_HOSTS", 1000)
	switches := envInt(t, "FABRIC_SSH_BENCH_SWITCHES", 20)
	login := time.Duration(envInt(t, "FABRIC_SSH_BENCH_LOGIN_MS", 1000)) * time.Millisecond
	command := time.Duration(envInt(t, "FABRIC_SSH_BENCH_COMMAND_MS", 20)) * time.Millisecond
	concurrency := envInt(t, "FABRIC_SSH_BENCH_CONCURRENCY", manager.NewOptions().FabricConcurrency) // the image's default
	portsPerSwitch := (hosts*cardsPerHost + switches - 1) / switches
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	fmt.Printf("\nSSH fabric at scale: %d hosts x %d NICs on %d emulated EOS switches (%d ports each), login %s, each command %s; the manager works %d switches at once, the anchor all\n",
		hosts, cardsPerHost, switches, portsPerSwitch, login, command, concurrency)

	fleet := startFleet(t, switches, portsPerSwitch, login, command)
	nd := &netv1.NetworkDevice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fabric"}}
	for i, s := range fleet {
		g.Expect(env.Client.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: switchName(i)},
			Type:       corev1.SecretTypeBasicAuth,
			StringData: map[string]string{corev1.BasicAuthUsernameKey: s.User, corev1.BasicAuthPasswordKey: s.Password},
		})).To(Succeed())
		nd.Spec.Switches = append(nd.Spec.Switches, netv1.Switch{Name: switchName(i), Address: s.Host, Port: int32(s.Port),
			NetworkOS: netv1.NetworkOSEOS, HostKey: s.HostKey, CredentialsRef: &netv1.SecretReference{Name: switchName(i)}})
	}
	g.Expect(env.Client.Create(ctx, nd)).To(Succeed())
	// Card k (host k/2, its card k%2) is cabled to switch k%switches, port k/switches.
	measure.Parallel(t, writers, hosts, func(h int) error {
		nic := &netv1.NIC{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: hostName(h)}, Spec: netv1.NICSpec{Node: hostName(h), NetworkDeviceRef: nd.Name}}
		for c := range cardsPerHost {
			k := h*cardsPerHost + c
			nic.Spec.NICs = append(nic.Spec.NICs, netv1.HostNIC{
				NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: switchName(k % switches), Port: intstr.FromString(portName(k / switches))}},
				Capability:    netv1.NICCapability{Speed: 10000},
			})
		}
		return env.Client.Create(ctx, nic)
	})
	g.Expect(env.Client.Create(ctx, &netv1.ClusterNetwork{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bench"},
		Spec: netv1.ClusterNetworkSpec{NetworkDeviceRef: nd.Name, VLANRange: "1000-1999", Networks: []netv1.Network{
			{Name: "control", NICHint: netv1.NICHint{Speed: 1000}},
			{Name: "data", NICHint: netv1.NICHint{Speed: 1000}},
		}},
	})).To(Succeed())

	managertest.Start(t, env, ns, []controller.Group{controller.Fabric}, func(o *manager.Options) {
		o.Concurrency, o.FabricConcurrency = 10, concurrency
		o.Logger = ctrl.Log // errors only (TestMain): a line per configured switch would bury the figures
	})
	g.Eventually(func(g Gomega) {
		cn := getCN(g, ns)
		g.Expect(cn.Status.Available).To(HaveLen(hosts), "every host available before the clock starts")
		g.Expect(cn.Status.Networks).To(HaveLen(2))
	}, 15*time.Minute, time.Second).Should(Succeed())
	// The manager's first passes (a login to every switch to read it back, another for the NICs
	// created meanwhile) end before the clock starts: the run measures hosts joining a running
	// manager, not its start. Settled: every switch read, and no login for settle (longer than
	// a round of logins).
	settle := max(5*time.Second, 3*login)
	g.Eventually(func(g Gomega) {
		got := &netv1.NetworkDevice{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(nd), got)).To(Succeed())
		g.Expect(got.Status.Switches).To(HaveLen(switches), "every switch read once before the clock starts")
		for _, sw := range got.Status.Switches {
			g.Expect(sw.Reachable).To(BeTrue(), "switch %s: %s", sw.Name, sw.LastError)
		}
		before := totalLogins(fleet)
		time.Sleep(settle)
		g.Expect(totalLogins(fleet)).To(Equal(before), "the manager still logging in to switches")
	}, 15*time.Minute, time.Second).Should(Succeed())
	logins0 := make([]int, switches)
	for i, s := range fleet {
		logins0[i] = s.Logins()
		s.Commands()
	}

	cpuBefore := measure.ProcessCPU(os.Getpid())
	peakCtx, stopPeak := context.WithCancel(ctx)
	defer stopPeak()
	peak := measure.WatchPeakHeap(peakCtx)
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
	g.Eventually(func(g Gomega) {
		cn := getCN(g, ns)
		ready := 0
		for _, s := range cn.Status.States {
			if s.State == netv1.HostReady {
				ready++
			}
		}
		fmt.Printf("  %6.1fs: %d of %d ready\n", time.Since(start).Seconds(), ready, hosts)
		g.Expect(ready).To(Equal(hosts))
	}, 30*time.Minute, 2*time.Second).Should(Succeed())
	elapsed := time.Since(start)
	cpu := measure.ProcessCPU(os.Getpid()) - cpuBefore
	peakHeap := peak()

	cn := getCN(g, ns)
	vlanOf := map[string]int{}
	for _, n := range cn.Status.Networks {
		vlanOf[n.Name] = int(n.VLANID)
	}
	fmt.Println("\nper switch: ports, logins, commands sent during the run")
	var logins []int
	for i, s := range fleet {
		for j := range portsPerSwitch {
			k := j*switches + i
			if k >= hosts*cardsPerHost {
				continue
			}
			want := vlanOf[[]string{"control", "data"}[k%cardsPerHost]]
			if p, _ := s.Config.Port(portName(j)); p.Mode != "access" || p.Access != want {
				t.Fatalf("switch %s port %s is %s %d, want access %d", switchName(i), portName(j), p.Mode, p.Access, want)
			}
		}
		l := s.Logins() - logins0[i]
		logins = append(logins, l)
		fmt.Printf("  %-6s %5d ports %4d logins %6d commands\n", switchName(i), portsPerSwitch, l, len(s.Commands()))
	}
	slices.Sort(logins)
	fmt.Printf("\nmetalwire: %d hosts ready in %.1fs; logins per switch min %d, median %d, max %d for %d ports; manager CPU %.1fs (this process), peak heap %.0f MiB, max RSS %.0f MiB\n",
		hosts, elapsed.Seconds(), logins[0], logins[len(logins)/2], logins[len(logins)-1], portsPerSwitch, cpu.Seconds(),
		float64(peakHeap)/(1<<20), float64(measure.PeakRSS(os.Getpid()))/(1<<20))

	anchor := ngsAnchor(t, hosts, switches, portsPerSwitch, login, command)
	fmt.Printf("networking-generic-switch's way (one login per port change, one change at a time per switch): %.1fs, %.1fx metalwire's time\n",
		anchor.Seconds(), anchor.Seconds()/elapsed.Seconds())
	if portsPerSwitch >= 20 && logins[len(logins)-1] >= portsPerSwitch {
		t.Errorf("a switch got %d logins for %d ports: one per host, not one per batch", logins[len(logins)-1], portsPerSwitch)
	}
}

// ngsAnchor drives the same port changes as networking-generic-switch does by default: its
// add_network creates each network's VLAN on every switch in a session of its own, then every
// port change is its own SSH session (login, enable, configure, the port's lines, save), and a
// switch takes one session at a time (ngs_max_connections 1); switches work in parallel.
func ngsAnchor(t *testing.T, hosts, switches, portsPerSwitch int, login, command time.Duration) time.Duration {
	t.Helper()
	fleet := startFleet(t, switches, portsPerSwitch, login, command)
	set := vendorssh.EOS()
	set.ReadCommands, set.ParseState = nil, nil // NGS sends its lines without reading the port back
	drv := sshcli.Driver{Set: set}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, switches)
	for i, s := range fleet {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ep := fabric.Endpoint{Switch: switchName(i), Address: s.Host, Port: s.Port, HostKey: s.HostKey,
				Credentials: fabric.Credentials{Username: s.User, Password: s.Password}}
			session := func(batch fabric.Batch) error {
				sess, err := drv.Connect(context.Background(), ep)
				if err != nil {
					return err
				}
				defer func() { _ = sess.Close() }()
				return sess.Apply(context.Background(), batch)
			}
			for c := range cardsPerHost {
				if err := session(fabric.Batch{{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1000 + c}}}); err != nil {
					errs <- err
					return
				}
			}
			for j := range portsPerSwitch {
				k := j*switches + i
				if k >= hosts*cardsPerHost {
					return
				}
				vlan := 1000 + k%cardsPerHost
				if err := session(fabric.Batch{{Op: fabric.OpAccessPort, Port: fabric.Port{Name: portName(j), Mode: fabric.ModeAccess, VLAN: vlan}}}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i, s := range fleet {
		for j := range portsPerSwitch {
			if k := j*switches + i; k < hosts*cardsPerHost {
				if p, _ := s.Config.Port(portName(j)); p.Mode != "access" || p.Access != 1000+k%cardsPerHost {
					t.Fatalf("anchor: switch %s port %s is %s %d, want access %d", switchName(i), portName(j), p.Mode, p.Access, 1000+k%cardsPerHost)
				}
			}
		}
	}
	return elapsed
}

func startFleet(t *testing.T, switches, ports int, login, command time.Duration) []*vendortest.Server {
	t.Helper()
	names := make([]string, ports)
	for j := range names {
		names[j] = portName(j)
	}
	fleet := make([]*vendortest.Server, switches)
	for i := range fleet {
		fleet[i] = vendortest.Start(t, "eos", names...)
		fleet[i].SetDelays(login, command)
	}
	return fleet
}

func totalLogins(fleet []*vendortest.Server) int {
	n := 0
	for _, s := range fleet {
		n += s.Logins()
	}
	return n
}

func getCN(g Gomega, ns string) *netv1.ClusterNetwork {
	cn := &netv1.ClusterNetwork{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "bench"}, cn)).To(Succeed())
	return cn
}

func switchName(i int) string { return fmt.Sprintf("leaf%02d", i) }
func hostName(i int) string   { return fmt.Sprintf("host%04d", i) }
func portName(j int) string   { return fmt.Sprintf("Ethernet%d", j+1) }

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
