package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/metalwire/metalwire/internal/devenv"
	"github.com/metalwire/metalwire/internal/manager"
	"github.com/metalwire/metalwire/internal/scheme"
	"github.com/metalwire/metalwire/pkg/fabric/view"
)

func newFabricCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fabric",
		Short: "Look at the fabric: switches, ports, hosts and VLANs",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newFabricShowCommand())
	return cmd
}

func newFabricShowCommand() *cobra.Command {
	var kubeconfig, namespace, format string
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print the switches, their ports, the hosts cabled to them and the VLANs they carry",
		Long: `Read the NetworkDevices, NICs and ClusterNetworks of a namespace and print the fabric:
as a table (the default), as a Graphviz graph (--format dot), or as SVG drawn by Graphviz's dot
(--format svg; needs the graphviz package). Each network has its own colour in the graph; a
drifted or failed port is a red dashed edge that says so.`,
		Example: `  metalwire fabric show -n default
  metalwire fabric show --format svg > fabric.svg`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "table" && format != "dot" && format != "svg" {
				return usageError{fmt.Errorf("--format %q: choose table, dot or svg", format)}
			}
			cfg, err := manager.RestConfig(kubeconfig)
			if err != nil {
				return err
			}
			c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
			if err != nil {
				return err
			}
			v, err := devenv.ReadFabric(cmd.Context(), c, namespace)
			if err != nil {
				return err
			}
			out := []byte(v.Table())
			switch format {
			case "dot":
				out = []byte(v.DOT())
			case "svg":
				if out, err = view.SVG(cmd.Context(), v.DOT()); err != nil {
					return err
				}
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "path to a kubeconfig; default: $KUBECONFIG, then ~/.kube/config")
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "default", "namespace of the fabric's objects")
	cmd.Flags().StringVar(&format, "format", "table", "table, dot (Graphviz) or svg")
	return cmd
}

