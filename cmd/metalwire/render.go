package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/pkg/render"
)

// Output formats of metalwire render.
var renderFormats = []string{"network-data", "metadata", "netplan", "nmstate", "os-net-config", "os-net-config-mapping"}

type renderOptions struct {
	template, host, pools  string
	vlans, nic             string
	index                  int
	format                 string
	machine, metal3machine string
}

func newRenderCommand() *cobra.Command {
	o := &renderOptions{}
	cmd := &cobra.Command{
		Use:   "render --template T.yaml --host BMH.yaml",
		Short: "Render a data template for one host, offline, to check it before any host uses it",
		Long: `render renders a Metal3DataTemplate (or a Metal3PreprovisioningDataTemplate) for one
BareMetalHost from files, with no cluster: the metaData map, network_data.json, cloud-init
network config v2 (netplan), nmstate YAML, or os-net-config's config file (os-net-config) and
mapping file (os-net-config-mapping: interface_mapping from link name to MAC, for links not named
after their NIC's kernel name). A template with its own os-net-config template (spec.osNetConfig,
what metalwire generate --templates writes) is rendered from that, as the data controller does.
Both os-net-config documents are checked with os-net-config's own schema and mapping rules
before they are printed.

Addresses from IP pools come from --pools, a YAML map from pool name to the address the pool
gave the host (address, prefix, gateway, dnsServers). The Machine and Metal3Machine do not
exist offline: name them with --machine and --metal3machine when the template reads them
(metaData always does, for providerid). Without them the output is what a host gets before
provisioning.

A VLAN link that takes its id from a ClusterNetwork network (vlanIDFrom) gets it from --vlans,
a YAML map from "clusterNetwork/network" to the VLAN id the fabric controller assigned
(kubectl get clusternetwork NAME -o jsonpath='{.status.networks}').

A bond that takes its members from a ClusterNetwork network (bondFrom) gets them from --nic, the
host's NIC object with the status the fabric controller wrote (kubectl get nic NAME -o yaml): the
cards bonded for that network, by MAC, and the bond's mode.`,
		Example: `  metalwire render --template template.yaml --host host.yaml --pools pools.yaml
  metalwire render --template template.yaml --host host.yaml --index 3 --format netplan
  metalwire render --template template.yaml --host host.yaml --pools pools.yaml --format os-net-config > config.yaml
  metalwire render --template template.yaml --host host.yaml --pools pools.yaml --format os-net-config-mapping > mapping.yaml
  metalwire render --template template.yaml --host host.yaml --metal3machine worker-0 --format metadata
  metalwire render --template template.yaml --host host.yaml --vlans vlans.yaml   # vlans.yaml: {prod/storage: 1001}
  metalwire render --template template.yaml --host host.yaml --nic nic.yaml       # kubectl get nic nic-bm0 -o yaml > nic.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.template == "" || o.host == "" {
				return usageError{errors.New("--template and --host are required: give the Metal3DataTemplate and BareMetalHost manifests to render")}
			}
			if !slices.Contains(renderFormats, o.format) {
				return usageError{fmt.Errorf("--format %q is not a format; use one of %s", o.format, strings.Join(renderFormats, ", "))}
			}
			if o.index < 0 {
				return usageError{fmt.Errorf("--index %d is negative; indexes start at 0", o.index)}
			}
			out, err := o.run()
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.template, "template", "", "Metal3DataTemplate or Metal3PreprovisioningDataTemplate manifest to render (required)")
	f.StringVar(&o.host, "host", "", "BareMetalHost manifest of the host to render for (required)")
	f.StringVar(&o.pools, "pools", "", "YAML map from pool name to the address it gave the host: {address, prefix, gateway, dnsServers}")
	f.StringVar(&o.vlans, "vlans", "", `YAML map from "clusterNetwork/network" to its VLAN id, for VLAN links with vlanIDFrom`)
	f.StringVar(&o.nic, "nic", "", "the host's NIC object (kubectl get nic NAME -o yaml), for bonds with bondFrom")
	f.IntVar(&o.index, "index", 0, "Metal3Data index of the host (seed-era ipAddress ranges and metaData indexes use it)")
	f.StringVar(&o.format, "format", "network-data", "output: "+strings.Join(renderFormats, ", "))
	f.StringVar(&o.machine, "machine", "", "name of the CAPI Machine, for templates that read it")
	f.StringVar(&o.metal3machine, "metal3machine", "", "name of the Metal3Machine, for templates that read it (metaData always does)")
	return cmd
}

func (o *renderOptions) run() ([]byte, error) {
	data, err := os.ReadFile(o.template)
	if err != nil {
		return nil, err
	}
	tmpl, err := render.DecodeTemplate(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.template, err)
	}
	if data, err = os.ReadFile(o.host); err != nil {
		return nil, err
	}
	host, err := render.DecodeHost(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.host, err)
	}
	facts := &render.Facts{Index: o.index, Namespace: tmpl.Namespace}
	facts.HostFacts(host)
	if facts.Namespace == "" {
		facts.Namespace = host.Namespace
	}
	if o.machine != "" {
		facts.Machine = &render.Object{Name: o.machine, Namespace: facts.Namespace}
	}
	if o.metal3machine != "" {
		facts.Metal3Machine = &render.Object{Name: o.metal3machine, Namespace: facts.Namespace}
	}
	if o.vlans != "" {
		if facts.VLANs, err = readVLANs(o.vlans); err != nil {
			return nil, err
		}
	}
	if o.nic != "" {
		if facts.Bonds, err = readBonds(o.nic, tmpl); err != nil {
			return nil, err
		}
	}
	byName := map[string]render.PoolAddress{}
	if o.pools != "" {
		if data, err = os.ReadFile(o.pools); err != nil {
			return nil, err
		}
		if byName, err = render.DecodePools(data); err != nil {
			return nil, fmt.Errorf("%s: %w", o.pools, err)
		}
	}
	if o.format == "metadata" {
		if tmpl.Preprovisioning() {
			return nil, fmt.Errorf("%s: a %s has no metaData; render it with --format network-data, netplan, nmstate or os-net-config", o.template, tmpl.Kind)
		}
		refs, err := render.Pools(tmpl.MetaData, nil, facts)
		if err != nil {
			return nil, o.explain(err)
		}
		// An osNetConfig's files go into the metaData too, rendered from its own pools.
		facts.Pools = render.PoolsByName(byName, render.OSNetConfigPools(tmpl.OSNetConfig, refs))
		mdFacts, err := render.WithOSNetConfigAliases(tmpl.OSNetConfig, facts)
		if err != nil {
			return nil, o.explain(err)
		}
		var onc *render.OSNetConfig
		if tmpl.OSNetConfig != nil {
			if onc, err = render.OSNetConfigFromTemplate(tmpl.OSNetConfig, facts); err != nil {
				return nil, o.explain(err)
			}
		}
		m, err := render.HostMetaData(tmpl.MetaData, tmpl.OSNetConfig, onc, mdFacts)
		if err != nil {
			return nil, o.explain(err)
		}
		return render.MarshalMetaData(m)
	}
	netTmpl := *tmpl
	netTmpl.MetaData = nil // only the pools of the network data matter here
	refs, err := netTmpl.Pools(facts)
	if err != nil {
		return nil, o.explain(err)
	}
	facts.Pools = render.PoolsByName(byName, refs)
	// With an os-net-config template, its interface aliases name the host's NICs too.
	netFacts, err := render.WithOSNetConfigAliases(tmpl.OSNetConfig, facts)
	if err != nil {
		return nil, o.explain(err)
	}
	net, err := tmpl.Networking(netFacts)
	if err != nil {
		return nil, o.explain(err)
	}
	switch o.format {
	case "netplan":
		return net.Netplan()
	case "nmstate":
		return net.NMState()
	case "os-net-config", "os-net-config-mapping":
		onc, err := tmpl.RenderOSNetConfig(net, facts)
		if err != nil {
			return nil, o.explain(err)
		}
		if o.format == "os-net-config-mapping" {
			return onc.Mapping, nil
		}
		return onc.Config, nil
	}
	return net.JSON()
}

// explain adds the command-line fix to errors whose cause is a missing flag.
func (o *renderOptions) explain(err error) error {
	var e *render.Error
	if !errors.As(err, &e) {
		return err
	}
	switch e.Reason {
	case render.ReasonWaitingForPool:
		return fmt.Errorf("%w; give its address in --pools (a YAML map: %s: {address: ..., prefix: ..., gateway: ...})", err, e.Pool.Name)
	case render.ReasonObjectUnavailable:
		return fmt.Errorf("%w; or pass --%s NAME to render as for a provisioned host", err, e.Object)
	case render.ReasonVLANUnresolved:
		return fmt.Errorf("%w; give its VLAN id in --vlans (a YAML map: %s: 1001)", err, e.VLAN)
	case render.ReasonBondUnresolved:
		return fmt.Errorf("%w; give the host's NIC object, once the ClusterNetwork bonded its cards, in --nic (kubectl get nic NAME -o yaml)", err)
	}
	return err
}

// readVLANs reads the --vlans file: a YAML map from "clusterNetwork/network" to a VLAN id.
func readVLANs(path string) (map[render.VLANRef]int32, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var byName map[string]int32
	if err := yaml.UnmarshalStrict(data, &byName); err != nil {
		return nil, fmt.Errorf("%s: not a YAML map from clusterNetwork/network to a VLAN id (e.g. prod/storage: 1001): %w", path, err)
	}
	vlans := make(map[render.VLANRef]int32, len(byName))
	for key, id := range byName {
		cn, network, ok := strings.Cut(key, "/")
		if !ok || cn == "" || network == "" || strings.Contains(network, "/") {
			return nil, fmt.Errorf("%s: key %q is not clusterNetwork/network; write e.g. prod/storage: 1001", path, key)
		}
		if id < 1 || id > 4094 {
			return nil, fmt.Errorf("%s: %s: %d is not a VLAN id; give 1 to 4094", path, key, id)
		}
		vlans[render.VLANRef{ClusterNetwork: cn, Network: network}] = id
	}
	return vlans, nil
}

// readBonds reads the --nic file, the host's NIC object, into the fabric bonds the template's
// bondFrom bonds name.
func readBonds(path string, tmpl *render.Template) (map[render.VLANRef]render.FabricBond, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	nic := &netv1.NIC{}
	if err := yaml.Unmarshal(data, nic); err != nil {
		return nil, fmt.Errorf("%s: not a NIC manifest (kubectl get nic NAME -o yaml): %w", path, err)
	}
	if nic.Kind != "NIC" {
		return nil, fmt.Errorf("%s: kind is %q; give the host's NIC manifest (kubectl get nic NAME -o yaml)", path, nic.Kind)
	}
	bonds := map[render.VLANRef]render.FabricBond{}
	for _, ref := range render.BondRefs(tmpl.NetworkData) {
		bond, err := render.FabricBondOf(nic, ref.ClusterNetwork, ref.Network)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(bond.MACs) > 0 {
			bonds[ref] = bond
		}
	}
	return bonds, nil
}
