package data

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/spf13/pflag"
	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/metalwire/metalwire/internal/controller"
	"github.com/metalwire/metalwire/internal/controller/ippool"
	"github.com/metalwire/metalwire/internal/controller/metal3data"
	"github.com/metalwire/metalwire/internal/controller/metal3dataclaim"
	"github.com/metalwire/metalwire/internal/controller/metal3datatemplate"
	"github.com/metalwire/metalwire/internal/manager"
	"github.com/metalwire/metalwire/internal/scheme"
	"github.com/metalwire/metalwire/internal/testenv"
)

// managerEnv holds, in the benchmark's child process, the manager flags to run with.
const managerEnv = "BENCH_DATA_MANAGER_ARGS"

// generousLimits are client limits high enough not to be what limits a run: the anchors'
// 1,000 requests/s.
var generousLimits = []string{"--kube-api-qps=1000", "--kube-api-burst=2000"}

// startManager runs the IPAM and data-templating controllers in a process of their own (this
// test binary, started again), so that their CPU and memory are measured apart from the
// benchmark's. extra are `metalwire manager` flags; the rest are its defaults, as shipped. stop
// ends it (before its API server stops); it is also called when the test ends.
func startManager(t *testing.T, e *testenv.Env, ns string, extra []string) (cmd *exec.Cmd, stop func()) {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, e.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--kubeconfig=" + kubeconfig, "--namespace=" + ns}, extra...)
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), managerEnv+"="+strings.Join(args, " "))
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the manager: %v", err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
			if t.Failed() || logs.Len() > 0 {
				t.Logf("manager output:\n%s", logs.String())
			}
		})
	}
	t.Cleanup(stop)
	return cmd, stop
}

// runManager is the child process: the four controllers of a data-templating scale-up (IPPool,
// Metal3DataTemplate, Metal3DataClaim, Metal3Data) set up as `metalwire manager` sets them up,
// with its flags and their defaults (qps, burst, concurrency).
func runManager() int {
	o := &manager.Options{}
	fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(strings.Fields(os.Getenv(managerEnv))); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctrl.SetLogger(zap.New(zap.UseDevMode(false), zap.Level(zapcore.ErrorLevel)))
	cfg, err := manager.RestConfig(o.Kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg.QPS, cfg.Burst = o.QPS, o.Burst
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme.New(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		PprofBindAddress:       o.ProfilerAddr,
		Cache: cache.Options{
			DefaultNamespaces: map[string]cache.Config{o.WatchNamespace: {}},
			DefaultTransform:  cache.TransformStripManagedFields(),
			ByObject:          controller.CacheByObject(),
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, setup := range []func() error{
		func() error { return (&ippool.Reconciler{}).SetupWithManager(ctx, mgr, o.Concurrency) },
		func() error {
			return (&metal3datatemplate.Reconciler{Client: mgr.GetClient()}).SetupWithManager(ctx, mgr, o.Concurrency)
		},
		func() error {
			return (&metal3dataclaim.Reconciler{Client: mgr.GetClient()}).SetupWithManager(ctx, mgr, o.Concurrency)
		},
		func() error {
			return (&metal3data.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("metal3data")}).
				SetupWithManager(ctx, mgr, o.Concurrency)
		},
	} {
		if err := setup(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if err := mgr.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
