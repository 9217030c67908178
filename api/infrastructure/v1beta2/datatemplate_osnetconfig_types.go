package v1beta2

// OSNetConfigTemplate is a logical unit's os-net-config network configuration as a Jinja2
// template, the one `metalwire generate` renders per node (phase 1), rendered here per host by
// the data controller with addresses from IPPools (phase 2): the same text gives the same
// /etc/os-net-config/config.yaml.
//
// The template sees ip['<network>'] (the host's address from the network's pool with its
// prefix length, 192.168.0.10/24), config['<network>'] (.gateway, .dnsServers, .netmask and
// .cidr, from the same pool's answer), node (the macMappings entry the host matched, else the
// BareMetalHost's name) and unit. A name the template uses that is not defined is an error.
type OSNetConfigTemplate struct {
	// template is the Jinja2 text. Rendered, it is a list of os-net-config objects (or
	// network_config: holding one), checked against os-net-config's schema.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=262144
	Template string `json:"template"`

	// unit is the logical unit's name, the template's {{ unit }}.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Unit string `json:"unit,omitempty"`

	// networks gives each network the template names its IPPool: every host claims one address
	// from each.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Networks []OSNetConfigNetwork `json:"networks,omitzero"`

	// macMappings are os-net-config interface mappings of known hosts: a host whose NICs have
	// every MAC of an entry gets that entry as its mapping file (interface_mapping) and the
	// entry's name as {{ node }}.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=4096
	// +optional
	MACMappings []OSNetConfigMACMapping `json:"macMappings,omitzero"`

	// interfaces maps aliases to the host's NICs by their inspected name, for hosts no entry of
	// macMappings matches: the mapping file maps each alias to that NIC's MAC.
	// +listType=map
	// +listMapKey=alias
	// +kubebuilder:validation:MaxItems=128
	// +optional
	Interfaces []OSNetConfigInterface `json:"interfaces,omitzero"`

	// format says which files the host's metaData carries, base64-encoded, for its bootstrap
	// data to write from {{ ds.meta_data.<key> }}: os-net-config (the default) puts the config
	// and mapping files under os_net_config_config and os_net_config_mapping; netplan converts
	// the rendered configuration to one netplan file under netplan_config, for hosts without
	// os-net-config. A template netplan cannot express fails to render for every host.
	// +kubebuilder:validation:Enum=os-net-config;netplan
	// +optional
	Format OSNetConfigFormat `json:"format,omitempty"`
}

// OSNetConfigFormat is the network configuration tool a host runs its rendered template with.
type OSNetConfigFormat string

// Formats of OSNetConfigTemplate.
const (
	OSNetConfigFormatOSNetConfig OSNetConfigFormat = "os-net-config"
	OSNetConfigFormatNetplan     OSNetConfigFormat = "netplan"
)

// OSNetConfigNetwork names the IPPool of one network of an os-net-config template.
type OSNetConfigNetwork struct {
	// name is the network's name in the template: ip['<name>'], config['<name>'].
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// ipPool is the name of the ipam.metal3.io IPPool, in the template's namespace, the host's
	// address in the network comes from.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	IPPool string `json:"ipPool"`
}

// OSNetConfigMACMapping is one known host's interface mapping.
type OSNetConfigMACMapping struct {
	// name is the host's name in the mapping (node-0), the template's {{ node }}.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// interfaces maps each alias (em0) to a MAC address.
	// +kubebuilder:validation:MinProperties=1
	Interfaces map[string]MACAddress `json:"interfaces"`
}

// OSNetConfigInterface maps an alias to a host NIC.
type OSNetConfigInterface struct {
	// alias is the name the template uses (em0).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Alias string `json:"alias"`

	// hostInterface is the name of the NIC in the BareMetalHost's inspection data (eno1).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	HostInterface string `json:"hostInterface"`
}
