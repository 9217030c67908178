package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/metalwire/metalwire/internal/controller"
	"github.com/metalwire/metalwire/internal/devenv"
	"github.com/metalwire/metalwire/internal/simulator"
)

// devFlags are the settings of `metalwire dev`.
type devFlags struct {
	hosts     int
	namespace string
	apply     []string
	dir       string
	noBuild   bool
	ipReuse   bool
	// annotations are KEY=VALUE pairs put on every simulated host.
	annotations []string
	delays      simulator.Delays
	// controllers are metalwire's controller groups to run, or "none".
	controllers []string
}

func newDevCommand() *cobra.Command {
	f := &devFlags{delays: simulator.DefaultDelays}
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run metalwire locally with simulated hosts, until Ctrl-C",
		Long: `Run the whole system on this machine, without a Kubernetes cluster, Docker or servers:
a kube-apiserver and etcd from bin/ (built by make tools), every CRD, metalwire's controllers,
Cluster API's core controllers (in metalwire-capi, a child process found beside metalwire or on
PATH), and a host simulator that stands in for baremetal-operator.
It writes a kubeconfig so kubectl works while it runs, applies the --apply manifests, prints
each host's state changes, and writes the files each provisioned host would boot with under
<dir>/hosts/<host>/. The simulator is not baremetal-operator: it drives no hardware.`,
		Example: `  metalwire dev --hosts 4 --apply examples/
  KUBECONFIG=.metalwire/dev/kubeconfig kubectl get baremetalhosts`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := f.options(cmd)
			if err != nil {
				return err
			}
			return devenv.Run(cmd.Context(), opts)
		},
	}
	f.register(cmd, 3)
	return cmd
}

// register adds the flags dev and demo share; hosts is the default of --hosts.
func (f *devFlags) register(cmd *cobra.Command, hosts int) {
	fs := cmd.Flags()
	fs.IntVar(&f.hosts, "hosts", hosts, "number of simulated BareMetalHosts to create (host-0, host-1, ...)")
	fs.StringVar(&f.namespace, "namespace", "default", "namespace of the simulated hosts")
	fs.StringArrayVar(&f.apply, "apply", f.apply, "manifest file or directory to apply once running (server-side apply); repeat for more")
	fs.StringVar(&f.dir, "dir", devenv.DefaultDir, "folder for the kubeconfig, manager.log and the hosts' files")
	fs.StringArrayVar(&f.annotations, "host-annotation", nil, "KEY=VALUE annotation put on every simulated host when it is created (say, a pre-provisioning template reference); repeat for more")
	fs.BoolVar(&f.ipReuse, "ip-reuse", false, "name address claims after the host, as metalwire manager --ip-reuse does: a pre-provisioned host keeps its address once provisioned when both templates use one pool")
	fs.StringSliceVar(&f.controllers, "controllers", controller.GroupNames(), `metalwire's controller groups to run, comma-separated: `+strings.Join(controller.GroupNames(), ", ")+`; "none" runs only the control plane, Cluster API and the host simulator, for a manager you run yourself (metalwire manager --kubeconfig <dir>/kubeconfig)`)
	fs.BoolVar(&f.noBuild, "no-build", false, "fail instead of running make tools when kube-apiserver or etcd is missing from bin/, or building metalwire-capi (Cluster API's controllers) in the source tree when it is neither beside metalwire nor on PATH")
	fs.DurationVar(&f.delays.Registering, "registering-delay", f.delays.Registering, "how long a simulated host stays registering")
	fs.DurationVar(&f.delays.Inspecting, "inspecting-delay", f.delays.Inspecting, "how long a simulated host stays inspecting")
	fs.DurationVar(&f.delays.Provisioning, "provisioning-delay", f.delays.Provisioning, "how long a simulated host stays provisioning")
	fs.DurationVar(&f.delays.Deprovisioning, "deprovisioning-delay", f.delays.Deprovisioning, "how long a simulated host stays deprovisioning")
}

// options checks the flags and turns them into dev mode's options.
func (f *devFlags) options(cmd *cobra.Command) (devenv.Options, error) {
	if f.hosts < 0 {
		return devenv.Options{}, usageError{errors.New("--hosts must be 0 or more")}
	}
	var hostOpts simulator.HostOptions
	for _, kv := range f.annotations {
		key, value, ok := strings.Cut(kv, "=")
		if !ok || key == "" {
			return devenv.Options{}, usageError{fmt.Errorf("--host-annotation %q: write KEY=VALUE", kv)}
		}
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			return devenv.Options{}, usageError{fmt.Errorf("--host-annotation %q: %s is not an annotation key: %s", kv, key, strings.Join(errs, "; "))}
		}
		if _, twice := hostOpts.Annotations[key]; twice {
			return devenv.Options{}, usageError{fmt.Errorf("--host-annotation: %s is given twice; give each key once", key)}
		}
		if hostOpts.Annotations == nil {
			hostOpts.Annotations = map[string]string{}
		}
		hostOpts.Annotations[key] = value
	}
	groups := []controller.Group{}
	if !slices.Equal(f.controllers, []string{"none"}) {
		var err error
		if groups, err = controller.ParseGroups(f.controllers); err != nil {
			return devenv.Options{}, usageError{fmt.Errorf("%w, or none", err)}
		}
	}
	return devenv.Options{
		Controllers: groups,
		Dir:         f.dir,
		Hosts:       f.hosts,
		Namespace:   f.namespace,
		HostOptions: hostOpts,
		Apply:       f.apply,
		Delays:      f.delays,
		MakeTools:   !f.noBuild,
		IPReuse:     f.ipReuse,
		Out:         cmd.OutOrStdout(),
	}, nil
}
