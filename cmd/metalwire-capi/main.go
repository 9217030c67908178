// Command metalwire-capi runs Cluster API's core controllers (Cluster, Machine, MachineSet,
// MachineDeployment, MachineHealthCheck) and their admission webhooks for metalwire's dev mode.
// `metalwire dev` and `metalwire demo` start it as a child process against their control plane:
// Cluster API's code links Go's testing package (through sigs.k8s.io/cluster-api/util/conversion),
// and keeping it in its own binary keeps that out of the CLI. It is not part of the image: a real
// management cluster runs Cluster API's own manager.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// readyLine (internal/devenv's clusterAPIReadyLine) is what the program writes on stdout, and the
// only thing, once its webhook server answers and its caches have synced: dev mode waits for it
// before applying anything.
const readyLine = "ready"

func main() {
	os.Exit(run(ctrl.SetupSignalHandler(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

type flags struct {
	kubeconfig  string
	webhookHost string
	webhookPort int
	certDir     string
	// stdinParent ends the program when stdin reaches its end: dev mode holds the other end of
	// a pipe, so the program ends when dev mode does, even when dev mode is killed.
	stdinParent bool
}

// run returns the exit code: 2 for a usage mistake, 1 for a failure while running.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var f flags
	fs := pflag.NewFlagSet("metalwire-capi", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the API server to run against (required)")
	fs.StringVar(&f.webhookHost, "webhook-host", "127.0.0.1", "address the admission webhook server binds")
	fs.IntVar(&f.webhookPort, "webhook-port", 0, "port of the admission webhook server (required); the webhook configurations must call https://<webhook-host>:<port>/<path>")
	fs.StringVar(&f.certDir, "webhook-cert-dir", "", "folder holding tls.crt and tls.key of the webhook server (required)")
	fs.BoolVar(&f.stdinParent, "stop-on-stdin-close", false, "stop when stdin is closed: set by metalwire dev, which holds the other end, so that this process never outlives it")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "metalwire-capi:", err)
		return 2
	}
	if err := f.check(); err != nil {
		fmt.Fprintln(stderr, "metalwire-capi:", err)
		return 2
	}
	log := zap.New(zap.WriteTo(stderr), zap.UseDevMode(false))
	ctrl.SetLogger(log)
	klog.SetLogger(log)
	ctx, cancel := context.WithCancel(ctrl.LoggerInto(ctx, log))
	defer cancel()
	if f.stdinParent {
		go func() {
			_, _ = io.Copy(io.Discard, stdin)
			log.Info("stdin closed: the process that started this one is gone; stopping")
			cancel()
		}()
	}
	if err := serve(ctx, f, func() { _, _ = fmt.Fprintln(stdout, readyLine) }); err != nil {
		fmt.Fprintln(stderr, "metalwire-capi:", err)
		return 1
	}
	return 0
}

func (f flags) check() error {
	switch {
	case f.kubeconfig == "":
		return errors.New("--kubeconfig is required: the API server's kubeconfig (metalwire dev writes <dir>/kubeconfig)")
	case f.webhookPort <= 0 || f.webhookPort > 65535:
		return fmt.Errorf("--webhook-port %d: give the port the webhook configurations call (1-65535)", f.webhookPort)
	case f.certDir == "":
		return errors.New("--webhook-cert-dir is required: a folder with tls.crt and tls.key for the webhook server")
	}
	return nil
}

// serve runs the manager until ctx ends, calling ready once it serves.
func serve(ctx context.Context, f flags, ready func()) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", f.kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig %s: %w", f.kubeconfig, err)
	}
	mgr, err := newManager(ctx, cfg, f)
	if err != nil {
		return err
	}
	stop := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	serving := make(chan error, 1)
	go func() { serving <- waitServing(ctx, mgr) }()
	select {
	case err := <-done:
		// The manager ended before it served (a port taken, a certificate missing): say so now,
		// not after waitServing's minute of polling a server that will not answer.
		// cancel (deferred) ends waitServing, whose answer goes to serving's buffer unread.
		if err == nil && stop.Err() == nil {
			err = errors.New("the manager stopped before it served")
		}
		return err
	case err := <-serving:
		if err != nil {
			// The manager runs on: stop it, or waiting for its end would wait for ever.
			cancel()
			merr := <-done
			if stop.Err() != nil {
				return merr // asked to stop before it served
			}
			return errors.Join(err, merr)
		}
	}
	ready()
	return <-done
}
