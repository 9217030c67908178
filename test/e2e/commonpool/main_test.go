package commonpool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/devenv"
	"github.com/metalwire/metalwire/internal/simulator"
)

const (
	ns = "default"
	// hosts is what examples/cluster needs: a control plane Machine and three workers.
	hosts    = 4
	template = "cluster-hosts"
)

var env *devenv.Env

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "commonpool:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "metalwire-commonpool-")
	if err != nil {
		return 0, err
	}
	keep := false
	defer func() {
		if !keep {
			_ = os.RemoveAll(dir)
		}
	}()
	env, err = devenv.Start(context.Background(), devenv.Options{
		Dir:       dir,
		Hosts:     hosts,
		Namespace: ns,
		HostOptions: simulator.HostOptions{Annotations: map[string]string{
			bmov1.PreprovisioningNetworkDataReferenceAnnotation: infrav1.PreprovisioningDataTemplateReferencePrefix + template,
		}},
		Apply: []string{filepath.Join("..", "..", "..", "examples", "cluster"), "testdata"},
		Delays: simulator.Delays{
			Registering:    100 * time.Millisecond,
			Inspecting:     100 * time.Millisecond,
			Provisioning:   200 * time.Millisecond,
			Deprovisioning: 200 * time.Millisecond,
		},
		IPReuse: true,
	})
	if err != nil {
		return 0, err
	}
	code := m.Run()
	if code != 0 {
		fmt.Fprintln(os.Stderr, "commonpool: the controllers' log is", filepath.Join(dir, "manager.log"), "(kept)")
		keep = true
	}
	return code, env.Stop()
}
