package main

import (
	"github.com/spf13/cobra"
)

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "metalwire",
		Short: "Network configuration and Cluster API infrastructure for Metal3 bare-metal hosts",
		Long: `metalwire is a Cluster API infrastructure provider for bare-metal hosts managed by
Metal3's baremetal-operator, with IP address management and DHCP-less pre-provisioning
network data. It is wire-compatible with CAPM3 and ipam.metal3.io manifests.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newVersionCommand(), newManagerCommand(), newMigrateCommand(), newRenderCommand(), newGenerateCommand(), newDevCommand(), newDemoCommand(), newFabricCommand())
	return root
}
