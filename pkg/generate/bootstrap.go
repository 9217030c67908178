package generate

import (
	"errors"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/pkg/render"
)

// Phase 2's bootstrap data. A KubeadmConfigTemplate (or a KubeadmControlPlane's
// kubeadmConfigSpec) is shared by every node of a unit, so it cannot hold a node's files as
// phase 1's KubeadmConfig does. The data controller puts each host's files into the host's
// metaData, base64-encoded (render.OSNetConfigMetaData); the bootstrap data writes them from
// {{ ds.meta_data.<key> }}, which cloud-init renders as Jinja2 (Cluster API's kubeadm bootstrap
// provider starts every cloud-config with `## template: jinja`), and runs the same command as
// phase 1 before kubeadm. The files on the node are then byte for byte phase 1's.

// nodeName is each node's kubeadm name: the host's, from BMO's metaData.
const nodeName = "{{ ds.meta_data.local_hostname }}"

// kubeadmFile is one entry of a KubeadmConfig's files.
func kubeadmFile(path, content, encoding string) map[string]any {
	f := map[string]any{"path": path, "owner": "root:root", "permissions": "0600", "content": content}
	if encoding != "" {
		f["encoding"] = encoding
	}
	return f
}

// networkCommand is what a node runs before kubeadm to apply its network configuration.
func networkCommand(format string) string {
	if format == FormatNetplan {
		return "netplan apply"
	}
	return OSNetConfigCommand
}

// dataTemplateFormat is the osNetConfig.format of a Metal3DataTemplate for the generator's format.
func dataTemplateFormat(format string) infrav1.OSNetConfigFormat {
	if format == FormatNetplan {
		return infrav1.OSNetConfigFormatNetplan
	}
	return infrav1.OSNetConfigFormatOSNetConfig
}

// metaDataFiles are the files of a unit's shared bootstrap data: each read from the host's
// metaData key that holds it.
func metaDataFiles(format string) []any {
	paths := map[string]string{
		render.OSNetConfigMetaDataKey:        ConfigPath,
		render.OSNetConfigMappingMetaDataKey: MappingPath,
		render.NetplanMetaDataKey:            NetplanPath,
	}
	keys := render.OSNetConfigMetaDataKeys(dataTemplateFormat(format))
	files := make([]any, 0, len(keys))
	for _, key := range keys {
		files = append(files, kubeadmFile(paths[key], "{{ ds.meta_data."+key+" }}", "base64"))
	}
	return files
}

// kubeadmConfigSpec is a unit's shared KubeadmConfigSpec: its network files from the metaData,
// the network command first, and the node named after its host.
func kubeadmConfigSpec(u *Unit, format string) map[string]any {
	spec := map[string]any{
		"files":              metaDataFiles(format),
		"preKubeadmCommands": []any{networkCommand(format)},
		"joinConfiguration":  map[string]any{"nodeRegistration": map[string]any{"name": nodeName}},
	}
	if u.ControlPlane {
		spec["initConfiguration"] = map[string]any{"nodeRegistration": map[string]any{"name": nodeName}}
		spec["joinConfiguration"] = map[string]any{"controlPlane": map[string]any{}, "nodeRegistration": map[string]any{"name": nodeName}}
	}
	return spec
}

// bootstrapObject is a unit's bootstrap configuration: a KubeadmControlPlane for the
// controllers (spec.version is required there), a KubeadmConfigTemplate for a node pool.
func bootstrapObject(u *Unit, o Options) (map[string]any, error) {
	name := o.Cluster + "-" + u.Name
	spec := kubeadmConfigSpec(u, o.Format)
	if !u.ControlPlane {
		return map[string]any{
			"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2", "kind": "KubeadmConfigTemplate",
			"metadata": objectMeta(name, o),
			"spec":     map[string]any{"template": map[string]any{"spec": spec}},
		}, nil
	}
	if o.KubernetesVersion == "" {
		return nil, errors.New("the controllers' KubeadmControlPlane needs a Kubernetes version (spec.version); give --kubernetes-version")
	}
	return map[string]any{
		"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlane",
		"metadata": objectMeta(name, o),
		"spec": map[string]any{
			"replicas": u.Replicas,
			"version":  o.KubernetesVersion,
			"machineTemplate": map[string]any{"spec": map[string]any{"infrastructureRef": map[string]any{
				// The user writes this Metal3MachineTemplate (docs/generate.md), named as the unit's
				// other objects.
				"apiGroup": infrav1.GroupVersion.Group, "kind": "Metal3MachineTemplate", "name": name,
			}}},
			"kubeadmConfigSpec": spec,
		},
	}, nil
}
