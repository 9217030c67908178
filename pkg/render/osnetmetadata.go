package render

import (
	"encoding/base64"
	"maps"
	"slices"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// Keys of a host's metaData (meta_data.json on its config drive) that carry the files rendered
// from its Metal3DataTemplate's osNetConfig, each base64-encoded: a multi-line YAML file would
// not survive being put into a cloud-config by cloud-init's Jinja2 ({{ ds.meta_data.<key> }}
// keeps no indentation), a base64 line does, and `encoding: base64` in the bootstrap data's
// file gives back the bytes. The names use underscores so that Jinja2 reads them as
// attributes. `metalwire generate --templates` prints the KubeadmConfigTemplate that writes them.
const (
	// OSNetConfigMetaDataKey holds /etc/os-net-config/config.yaml (format os-net-config).
	OSNetConfigMetaDataKey = "os_net_config_config"
	// OSNetConfigMappingMetaDataKey holds /etc/os-net-config/mapping.yaml (format os-net-config).
	OSNetConfigMappingMetaDataKey = "os_net_config_mapping"
	// NetplanMetaDataKey holds the netplan file (format netplan).
	NetplanMetaDataKey = "netplan_config"
)

// OSNetConfigMetaData is what a host's metaData carries of its rendered osNetConfig, in the
// template's format: the config and mapping files for os-net-config, the netplan file for
// netplan.
func OSNetConfigMetaData(t *infrav1.OSNetConfigTemplate, onc *OSNetConfig) map[string]string {
	enc := base64.StdEncoding.EncodeToString
	if t.Format == infrav1.OSNetConfigFormatNetplan {
		return map[string]string{NetplanMetaDataKey: enc(onc.Netplan)}
	}
	return map[string]string{OSNetConfigMetaDataKey: enc(onc.Config), OSNetConfigMappingMetaDataKey: enc(onc.Mapping)}
}

// HostMetaData renders a Metal3DataTemplate's metaData for one host (md may be nil) and, when
// the template has an osNetConfig (t, rendered for the host as onc), adds its files under their
// keys. A key the template's metaData sets itself is refused rather than overwritten: the host
// would otherwise get one of the two silently.
func HostMetaData(md *infrav1.MetaData, t *infrav1.OSNetConfigTemplate, onc *OSNetConfig, f *Facts) (map[string]string, error) {
	m, err := MetaData(md, f)
	if err != nil || t == nil {
		return m, err
	}
	files := OSNetConfigMetaData(t, onc)
	for _, k := range slices.Sorted(maps.Keys(files)) {
		if _, taken := m[k]; taken {
			return nil, invalid("metaData", "key %q is where osNetConfig puts its file for the host's bootstrap data; rename the metaData key", k)
		}
		m[k] = files[k]
	}
	return m, nil
}

// OSNetConfigMetaDataKeys lists the metaData keys of a format, in the order its files are written.
func OSNetConfigMetaDataKeys(format infrav1.OSNetConfigFormat) []string {
	if format == infrav1.OSNetConfigFormatNetplan {
		return []string{NetplanMetaDataKey}
	}
	return []string{OSNetConfigMetaDataKey, OSNetConfigMappingMetaDataKey}
}
