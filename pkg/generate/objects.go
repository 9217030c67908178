package generate

import (
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/metalwire/metalwire/pkg/render/osnetconfig"
)

// Options name what the file does not say: the cluster, where its objects go, what image the
// hosts run and which network configuration tool they have.
type Options struct {
	Cluster, Namespace string
	// KubernetesVersion is the Machines' spec.version; empty leaves it unset.
	KubernetesVersion string
	// ImageURL and ImageChecksum are the image each Metal3Machine writes to its host.
	ImageURL, ImageChecksum, ImageChecksumType, ImageFormat string
	// Format is FormatOSNetConfig (default) or FormatNetplan.
	Format string
}

// NodeLabel on a BareMetalHost names the generated node it is for: each Metal3Machine selects
// its host by the unit's hostSelector and this label.
const NodeLabel = "metalwire.io/node"

// Cluster API labels.
const (
	clusterNameLabel  = "cluster.x-k8s.io/cluster-name"
	controlPlaneLabel = "cluster.x-k8s.io/control-plane"
)

// OSNetConfigCommand is what a node runs before kubeadm to configure its network.
var OSNetConfigCommand = "os-net-config -c " + ConfigPath + " -m " + MappingPath

// Objects returns the node's Machine, Metal3Machine and KubeadmConfig. The Metal3Machine is
// pinned to the node's host by its hostSelector: the unit's labels and NodeLabel=<node name>.
// The KubeadmConfig writes the network configuration and, for os-net-config, runs it before
// kubeadm.
func Objects(nc *NodeConfig, o Options) ([]*unstructured.Unstructured, error) {
	name := o.Cluster + "-" + nc.Node.Name
	labels := map[string]any{clusterNameLabel: o.Cluster, "metalwire.io/unit": nc.Unit.Name}
	if nc.Unit.ControlPlane {
		labels[controlPlaneLabel] = ""
	}
	meta := func(kind, apiVersion string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": apiVersion,
			"kind":       kind,
			"metadata": map[string]any{
				"name":      name,
				"namespace": o.Namespace,
				"labels":    maps.Clone(labels),
			},
		}}
		return u
	}

	files, commands, err := nodeFiles(nc, o.Format)
	if err != nil {
		return nil, err
	}
	kc := meta("KubeadmConfig", "bootstrap.cluster.x-k8s.io/v1beta2")
	kcSpec := map[string]any{"files": files, "preKubeadmCommands": commands}
	switch {
	case nc.Unit.ControlPlane && nc.Node == nc.Unit.Nodes[0]:
		kcSpec["initConfiguration"] = map[string]any{"nodeRegistration": map[string]any{"name": nodeName}}
	case nc.Unit.ControlPlane:
		kcSpec["joinConfiguration"] = map[string]any{"controlPlane": map[string]any{}, "nodeRegistration": map[string]any{"name": nodeName}}
	default:
		kcSpec["joinConfiguration"] = map[string]any{"nodeRegistration": map[string]any{"name": nodeName}}
	}
	kc.Object["spec"] = kcSpec

	selector := map[string]any{NodeLabel: nc.Node.Name}
	for k, v := range nc.Unit.HostSelector {
		selector[k] = v
	}
	image := map[string]any{"url": o.ImageURL, "checksum": o.ImageChecksum}
	if o.ImageChecksumType != "" {
		image["checksumType"] = o.ImageChecksumType
	}
	if o.ImageFormat != "" {
		image["diskFormat"] = o.ImageFormat
	}
	m3m := meta("Metal3Machine", "infrastructure.cluster.x-k8s.io/v1beta2")
	m3m.Object["spec"] = map[string]any{
		"image":        image,
		"hostSelector": map[string]any{"matchLabels": selector},
	}

	machine := meta("Machine", "cluster.x-k8s.io/v1beta2")
	spec := map[string]any{
		"clusterName":       o.Cluster,
		"bootstrap":         map[string]any{"configRef": map[string]any{"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfig", "name": name}},
		"infrastructureRef": map[string]any{"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "Metal3Machine", "name": name},
	}
	if o.KubernetesVersion != "" {
		spec["version"] = o.KubernetesVersion
	}
	machine.Object["spec"] = spec
	return []*unstructured.Unstructured{kc, m3m, machine}, nil
}

// nodeFiles returns the KubeadmConfig files and preKubeadmCommands of the node's network
// configuration in the format asked for.
func nodeFiles(nc *NodeConfig, format string) ([]any, []any, error) {
	switch format {
	case "", FormatOSNetConfig:
		return []any{kubeadmFile(ConfigPath, string(nc.OSNetConfig), ""), kubeadmFile(MappingPath, string(nc.Mapping), "")}, []any{networkCommand(format)}, nil
	case FormatNetplan:
		plan, err := osnetconfig.Netplan(nc.Interfaces, nc.Node.Mapping)
		if err != nil {
			return nil, nil, fmt.Errorf("%s.networkConfig, as netplan for %s: %w", nc.Unit.Path, nc.Node.Name, err)
		}
		return []any{kubeadmFile(NetplanPath, string(plan), "")}, []any{networkCommand(format)}, nil
	}
	return nil, nil, fmt.Errorf("format %q is not a format; use %s or %s", format, FormatOSNetConfig, FormatNetplan)
}
