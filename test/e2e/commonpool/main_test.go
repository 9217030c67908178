package commonpool

import (
	"path/filepath"
	"testing"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/devenv"
	"github.com/metalwire/metalwire/internal/simulator"
	"github.com/metalwire/metalwire/test/e2e/framework"
)

const (
	ns = "default"
	// hosts is what examples/cluster needs: a control plane Machine and three workers.
	hosts    = 4
	template = "cluster-hosts"
)

var env *devenv.Env

func TestMain(m *testing.M) {
	framework.Main(m, &env, devenv.Options{
		Hosts:     hosts,
		Namespace: ns,
		HostOptions: simulator.HostOptions{Annotations: map[string]string{
			bmov1.PreprovisioningNetworkDataReferenceAnnotation: infrav1.PreprovisioningDataTemplateReferencePrefix + template,
		}},
		Apply:   []string{filepath.Join("..", "..", "..", "examples", "cluster"), "testdata"},
		IPReuse: true,
	})
}
