package main

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/metalwire/metalwire/internal/devenv"
	"github.com/metalwire/metalwire/internal/simulator"
)

// demoHosts is what examples/ needs: one control plane Machine and three workers. The spare
// hosts of examples/preprovisioning come with the manifests.
const demoHosts = 4

func newDemoCommand() *cobra.Command {
	f := &devFlags{delays: simulator.DefaultDelays, apply: []string{"examples"}}
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run dev mode with examples/ until every host is provisioned, show the result, stop",
		Long: `Start dev mode (as metalwire dev does), apply examples/, and wait until every Machine the
manifests ask for has a provisioned host and every host annotated for pre-provisioning was
inspected with its network data. Then print a table of the hosts (state, machine, addresses,
the files each boots with) and one host's network_data.json, and stop.

Exit code 0 only if all of that happened; otherwise 1, with what did not happen.`,
		Example: `  metalwire demo
  metalwire demo --apply my-cluster/ --hosts 6 --timeout 10m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if timeout <= 0 {
				return usageError{errors.New("--timeout must be more than 0, such as 5m")}
			}
			opts, err := f.options(cmd)
			if err != nil {
				return err
			}
			return devenv.RunDemo(cmd.Context(), devenv.DemoOptions{Options: opts, Timeout: timeout})
		},
	}
	f.register(cmd, demoHosts)
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "how long to wait for every host to reach its state")
	return cmd
}
