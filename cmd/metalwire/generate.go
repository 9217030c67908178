package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/metalwire/metalwire/internal/generateapply"
	"github.com/metalwire/metalwire/internal/manager"
	"github.com/metalwire/metalwire/internal/scheme"
	"github.com/metalwire/metalwire/pkg/generate"
)

type generateOptions struct {
	file, kubeconfig, stateName, outDir string
	delete                              []string
	dryRun, templates                   bool
	gen                                 generate.Options
}

func newGenerateCommand() *cobra.Command {
	o := &generateOptions{}
	cmd := &cobra.Command{
		Use:   "generate -f cluster-net.yaml --cluster NAME",
		Short: "Generate every node's Machine, Metal3Machine and KubeadmConfig with static addresses and os-net-config",
		Long: `generate reads one file of networks, an os-net-config template (Jinja2) per logical unit
(controllers, each node pool) and a MAC mapping per node, gives each node a static address in
every network its template uses, and applies each node's Machine, Metal3Machine (pinned to the
host labelled metalwire.io/node=<node>) and KubeadmConfig, which writes
/etc/os-net-config/config.yaml and mapping.yaml and runs os-net-config before kubeadm.

The addresses are kept in a ConfigMap in the cluster (<cluster>-ip-state), changed only by a
compare-and-swap: generators run at once never hand out one address twice, and running it again
changes nothing.

With --templates it turns the same file into IPPools, Metal3DataTemplates, the controllers'
KubeadmControlPlane and each node pool's KubeadmConfigTemplate instead, so that
MachineDeployments get their addresses from metalwire's controllers: each host's files travel
in its metaData, and the bootstrap configuration writes them and runs os-net-config before
kubeadm, as phase 1 does (see docs/generate.md).`,
		Example: `  metalwire generate -f cluster-net.yaml --cluster demo -n metal3 --image-url http://img/ubuntu.qcow2 --image-checksum http://img/ubuntu.qcow2.sha256sum
  metalwire generate -f cluster-net.yaml --cluster demo --dry-run ...
  metalwire generate -f cluster-net.yaml --cluster demo -o out/ --format netplan ...
  metalwire generate --cluster demo --delete nodepool1-node-3
  metalwire generate --templates -f cluster-net.yaml --cluster demo --kubernetes-version v1.34.1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.check(); err != nil {
				return usageError{err}
			}
			var f *generate.File
			if o.file != "" {
				data, err := os.ReadFile(o.file)
				if err != nil {
					return err
				}
				if f, err = generate.Parse(data); err != nil {
					return fmt.Errorf("%s: %w", o.file, err)
				}
			}
			if o.templates {
				out, err := generate.Templates(f, o.gen)
				if err != nil {
					return fmt.Errorf("%s: %w", o.file, err)
				}
				_, err = cmd.OutOrStdout().Write(out)
				return err
			}
			cfg, err := manager.RestConfig(o.kubeconfig)
			if err != nil {
				return err
			}
			c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
			if err != nil {
				return err
			}
			_, err = generateapply.Run(cmd.Context(), c, generateapply.Options{
				File: f, Generate: o.gen, StateName: o.stateName, Delete: o.delete,
				DryRun: o.dryRun, OutDir: o.outDir, Out: cmd.OutOrStdout(),
			})
			if err != nil && o.file != "" {
				return fmt.Errorf("%s: %w", o.file, err)
			}
			return err
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&o.file, "file", "f", "", "the configuration: infra.networks, controllers and nodepools (required unless --delete)")
	fs.StringVar(&o.gen.Cluster, "cluster", "", "name of the Cluster API Cluster the nodes join (required)")
	fs.StringVarP(&o.gen.Namespace, "namespace", "n", "default", "namespace of the generated objects and of the state ConfigMap")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "path to a kubeconfig; default: $KUBECONFIG, then the in-cluster service account")
	fs.StringVar(&o.stateName, "state-configmap", "", "name of the ConfigMap holding the address state (default <cluster>-ip-state)")
	fs.StringSliceVar(&o.delete, "delete", nil, "free the addresses of these nodes (e.g. nodepool1-node-3) once their Machines are gone")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print what would change (addresses, objects) and change nothing")
	fs.StringVarP(&o.outDir, "output-dir", "o", "", "write each node's objects to DIR/<node>.yaml instead of applying them (the addresses are still recorded)")
	fs.StringVar(&o.gen.Format, "format", generate.FormatOSNetConfig, "network configuration the nodes get: os-net-config or netplan (/etc/netplan/60-metalwire.yaml)")
	fs.BoolVar(&o.templates, "templates", false, "print IPPools, a Metal3DataTemplate per logical unit, the controllers' KubeadmControlPlane and each pool's KubeadmConfigTemplate instead (phase 2: for MachineDeployments); needs no cluster")
	fs.StringVar(&o.gen.KubernetesVersion, "kubernetes-version", "", "spec.version of the Machines (e.g. v1.34.1); with --templates, of the KubeadmControlPlane (required then)")
	fs.StringVar(&o.gen.ImageURL, "image-url", "", "URL of the image each Metal3Machine writes to its host (required to apply)")
	fs.StringVar(&o.gen.ImageChecksum, "image-checksum", "", "the image's checksum, or the URL of a file holding it (required to apply)")
	fs.StringVar(&o.gen.ImageChecksumType, "image-checksum-type", "", "md5, sha256 or sha512 (default: guessed by Ironic)")
	fs.StringVar(&o.gen.ImageFormat, "image-format", "", "the image's disk format: raw, qcow2, vdi, vmdk or live-iso")
	return cmd
}

func (o *generateOptions) check() error {
	switch {
	case o.gen.Cluster == "":
		return errors.New("--cluster is required: the name of the Cluster the nodes join")
	case o.file == "" && len(o.delete) == 0:
		return errors.New("-f is required: the file of networks, templates and MAC mappings (see docs/generate.md)")
	case o.file != "" && len(o.delete) > 0:
		return errors.New("--delete frees addresses and generates nothing: leave out -f")
	case o.gen.Format != generate.FormatOSNetConfig && o.gen.Format != generate.FormatNetplan:
		return fmt.Errorf("--format %q is not a format; use os-net-config or netplan", o.gen.Format)
	case o.templates && (len(o.delete) > 0 || o.outDir != "" || o.dryRun):
		return errors.New("--templates prints manifests and needs no cluster: leave out --delete, --dry-run and -o")
	case !o.templates && len(o.delete) == 0 && (o.gen.ImageURL == "" || o.gen.ImageChecksum == ""):
		return errors.New("--image-url and --image-checksum are required: the image each Metal3Machine writes to its host")
	}
	return nil
}
