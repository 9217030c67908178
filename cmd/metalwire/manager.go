package main

import (
	"github.com/spf13/cobra"

	"github.com/metalwire/metalwire/internal/manager"
)

// newManagerCommand runs the same manager as the image's binary (cmd/manager), as a subcommand.
func newManagerCommand() *cobra.Command {
	o := &manager.Options{}
	cmd := &cobra.Command{
		Use:   "manager",
		Short: "Run the metalwire controllers against a Kubernetes cluster",
		Long: `Run the metalwire controller manager. It reconciles metalwire's kinds in the cluster that
--kubeconfig (or KUBECONFIG, or the in-cluster service account) points at, serves health checks
and Prometheus metrics, and elects a leader so that several replicas can run safely.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			groups, err := o.Groups()
			if err != nil {
				return usageError{err}
			}
			return manager.Run(cmd.Context(), o, groups)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}
