package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Metal3DataTemplateSpec is CAPM3 v1beta1's Metal3DataTemplate spec.
type Metal3DataTemplateSpec struct {
	// +optional
	ClusterName string `json:"clusterName"`
	// templateReference is v1beta1-only (v1beta2 dropped it); it is kept in an annotation.
	// +optional
	TemplateReference string `json:"templateReference,omitempty"`
	// +optional
	MetaData *MetaData `json:"metaData,omitempty"`
	// +optional
	NetworkData *NetworkData `json:"networkData,omitempty"`
}

// Metal3DataTemplateStatus is CAPM3 v1beta1's Metal3DataTemplate status.
type Metal3DataTemplateStatus struct {
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`
	// indexes maps a Metal3DataClaim's name to its index (v1beta2 makes it a list).
	// +optional
	Indexes map[string]int `json:"indexes,omitzero"`
}

// Metal3DataTemplate is CAPM3's v1beta1 Metal3DataTemplate, served by conversion to v1beta2.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3datatemplates,scope=Namespaced,categories=cluster-api,shortName=m3dt;m3datatemplate;m3datatemplates;metal3dt;metal3datatemplate
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.clusterName",description="Cluster the template belongs to"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type Metal3DataTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   Metal3DataTemplateSpec   `json:"spec,omitempty,omitzero"`
	Status Metal3DataTemplateStatus `json:"status,omitempty,omitzero"`
}

// Metal3DataTemplateList is a list of Metal3DataTemplates.
//
// +kubebuilder:object:root=true
type Metal3DataTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3DataTemplate `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Metal3DataTemplate{}, &Metal3DataTemplateList{})
}

// MetaData is the metaData part of a template. The *FromIPPool lists are v1beta2's *FromPool.
type MetaData struct {
	// +optional
	Strings []MetaDataString `json:"strings,omitzero"`
	// +optional
	ObjectNames []MetaDataObjectName `json:"objectNames,omitzero"`
	// +optional
	Indexes []MetaDataIndex `json:"indexes,omitzero"`
	// +optional
	Namespaces []MetaDataNamespace `json:"namespaces,omitzero"`
	// +optional
	IPAddressesFromPool []FromPool `json:"ipAddressesFromIPPool,omitzero"`
	// +optional
	PrefixesFromPool []FromPool `json:"prefixesFromIPPool,omitzero"`
	// +optional
	GatewaysFromPool []FromPool `json:"gatewaysFromIPPool,omitzero"`
	// +optional
	DNSServersFromPool []FromPool `json:"dnsServersFromIPPool,omitzero"`
	// +optional
	FromHostInterfaces []MetaDataHostInterface `json:"fromHostInterfaces,omitzero"`
	// +optional
	FromLabels []MetaDataFromLabel `json:"fromLabels,omitzero"`
	// +optional
	FromAnnotations []MetaDataFromAnnotation `json:"fromAnnotations,omitzero"`
}

// MetaDataIndex renders the host's index in the template, scaled and wrapped.
type MetaDataIndex struct {
	Key string `json:"key"`
	// +optional
	Offset *int `json:"offset,omitempty"`
	// +optional
	// +kubebuilder:default=1
	Step int `json:"step,omitempty"`
	// +optional
	Prefix string `json:"prefix,omitempty"`
	// +optional
	Suffix string `json:"suffix,omitempty"`
}

// MetaDataFromLabel renders a label of an object.
type MetaDataFromLabel struct {
	Key    string `json:"key"`
	Object string `json:"object"`
	Label  string `json:"label"`
}

// MetaDataFromAnnotation renders an annotation of an object.
type MetaDataFromAnnotation struct {
	Key        string `json:"key"`
	Object     string `json:"object"`
	Annotation string `json:"annotation"`
}

// MetaDataString renders a fixed string.
type MetaDataString struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// MetaDataNamespace renders the namespace.
type MetaDataNamespace struct {
	Key string `json:"key"`
}

// MetaDataObjectName renders the name of an object.
type MetaDataObjectName struct {
	Key    string `json:"key"`
	Object string `json:"object"`
}

// MetaDataHostInterface renders the MAC address of a host interface.
type MetaDataHostInterface struct {
	Key string `json:"key"`
	// +optional
	Interface string `json:"interface,omitempty"`
	// +optional
	FromBootMAC *bool `json:"fromBootMAC,omitempty"` //nolint:tagliatelle // upstream's name
}

// FromPool renders an address, prefix, gateway or DNS servers from a pool.
type FromPool struct {
	Key  string `json:"key"`
	Name string `json:"name"`
	// +optional
	APIGroup string `json:"apiGroup"`
	// +optional
	Kind string `json:"kind"`
}

// FromPoolAnnotation names an annotation holding the pool's name.
type FromPoolAnnotation struct {
	Object     string `json:"object"`
	Annotation string `json:"annotation"`
}

// NetworkData is the networkData part of a template.
type NetworkData struct {
	// +optional
	Links *NetworkDataLink `json:"links,omitempty"`
	// +optional
	Networks *NetworkDataNetwork `json:"networks,omitempty"`
	// +optional
	Services *NetworkDataService `json:"services,omitempty"`
}

// NetworkDataLink lists the links (v1beta2 adds bridges).
type NetworkDataLink struct {
	// +optional
	Ethernets []NetworkDataLinkEthernet `json:"ethernets,omitzero"`
	// +optional
	Bonds []NetworkDataLinkBond `json:"bonds,omitzero"`
	// +optional
	Vlans []NetworkDataLinkVlan `json:"vlans,omitzero"`
}

// NetworkLinkEthernetMacFromAnnotation names an annotation holding a MAC address.
type NetworkLinkEthernetMacFromAnnotation struct {
	Object     string `json:"object"`
	Annotation string `json:"annotation"`
}

// NetworkLinkEthernetMac says where a link's MAC address comes from.
type NetworkLinkEthernetMac struct {
	// +optional
	String *string `json:"string,omitempty"`
	// +optional
	FromHostInterface *string `json:"fromHostInterface,omitempty"`
	// +optional
	FromAnnotation *NetworkLinkEthernetMacFromAnnotation `json:"fromAnnotation,omitempty"`
}

// NetworkDataLinkEthernet is a physical interface.
type NetworkDataLinkEthernet struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	// +kubebuilder:default=1500
	MTU int `json:"mtu,omitempty"`
	// +optional
	MACAddress *NetworkLinkEthernetMac `json:"macAddress,omitempty"`
}

// NetworkDataLinkBond is a bond.
type NetworkDataLinkBond struct {
	BondMode string `json:"bondMode"`
	// +optional
	BondXmitHashPolicy string `json:"bondXmitHashPolicy,omitempty"`
	ID                 string `json:"id"`
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	// +kubebuilder:default=1500
	MTU int `json:"mtu,omitempty"`
	// +optional
	MACAddress *NetworkLinkEthernetMac `json:"macAddress,omitempty"`
	// parameters of the bond, by name (v1beta2 makes it a list of name and value).
	// +optional
	Parameters NetworkDataLinkBondParams `json:"parameters,omitzero"`
	BondLinks  []string                  `json:"bondLinks"`
}

// NetworkDataLinkBondParams maps a bond parameter's name to its value.
type NetworkDataLinkBondParams map[string]apiextensionsv1.JSON

// NetworkDataLinkVlan is a VLAN interface.
type NetworkDataLinkVlan struct {
	VlanID int    `json:"vlanID"`
	ID     string `json:"id"`
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	// +kubebuilder:default=1500
	MTU int `json:"mtu,omitempty"`
	// +optional
	MACAddress *NetworkLinkEthernetMac `json:"macAddress,omitempty"`
	VlanLink   string                  `json:"vlanLink"`
}

// NetworkDataService lists DNS servers.
type NetworkDataService struct {
	// +optional
	DNS []string `json:"dns,omitzero"`
	// +optional
	DNSFromIPPool *string `json:"dnsFromIPPool,omitempty"`
}

// NetworkDataServicev4 lists IPv4 DNS servers.
type NetworkDataServicev4 struct {
	// +optional
	DNS []string `json:"dns,omitzero"`
	// +optional
	DNSFromIPPool *string `json:"dnsFromIPPool,omitempty"`
}

// NetworkDataServicev6 lists IPv6 DNS servers.
type NetworkDataServicev6 struct {
	// +optional
	DNS []string `json:"dns,omitzero"`
	// +optional
	DNSFromIPPool *string `json:"dnsFromIPPool,omitempty"`
}

// NetworkGatewayv4 is an IPv4 gateway.
type NetworkGatewayv4 struct {
	// +optional
	String *string `json:"string,omitempty"`
	// +optional
	FromIPPool *string `json:"fromIPPool,omitempty"`
	// +optional
	FromPoolRef *corev1.TypedLocalObjectReference `json:"fromPoolRef,omitempty"`
	// +optional
	FromPoolAnnotation *FromPoolAnnotation `json:"fromPoolAnnotation,omitempty"`
}

// NetworkGatewayv6 is an IPv6 gateway.
type NetworkGatewayv6 struct {
	// +optional
	String *string `json:"string,omitempty"`
	// +optional
	FromIPPool *string `json:"fromIPPool,omitempty"`
	// +optional
	FromPoolRef *corev1.TypedLocalObjectReference `json:"fromPoolRef,omitempty"`
	// +optional
	FromPoolAnnotation *FromPoolAnnotation `json:"fromPoolAnnotation,omitempty"`
}

// NetworkDataRoutev4 is an IPv4 route.
type NetworkDataRoutev4 struct {
	Network string `json:"network"`
	// +optional
	Prefix *int `json:"prefix,omitempty"`
	// +optional
	Gateway NetworkGatewayv4 `json:"gateway"`
	// +optional
	Services *NetworkDataServicev4 `json:"services,omitempty"`
}

// NetworkDataRoutev6 is an IPv6 route.
type NetworkDataRoutev6 struct {
	Network string `json:"network"`
	// +optional
	Prefix *int `json:"prefix,omitempty"`
	// +optional
	Gateway NetworkGatewayv6 `json:"gateway"`
	// +optional
	Services *NetworkDataServicev6 `json:"services,omitempty"`
}

// NetworkDataIPv4 is a static IPv4 network (v1beta2 adds ipAddress and netmask).
type NetworkDataIPv4 struct {
	ID   string `json:"id"`
	Link string `json:"link"`
	// +optional
	IPAddressFromIPPool string `json:"ipAddressFromIPPool,omitempty"`
	// +optional
	FromPoolRef *corev1.TypedLocalObjectReference `json:"fromPoolRef,omitempty"`
	// +optional
	FromPoolAnnotation *FromPoolAnnotation `json:"fromPoolAnnotation,omitempty"`
	// +optional
	Routes []NetworkDataRoutev4 `json:"routes,omitzero"`
}

// NetworkDataIPv6 is a static IPv6 network (v1beta2 adds ipAddress and netmask).
type NetworkDataIPv6 struct {
	ID   string `json:"id"`
	Link string `json:"link"`
	// +optional
	IPAddressFromIPPool string `json:"ipAddressFromIPPool"`
	// +optional
	FromPoolRef *corev1.TypedLocalObjectReference `json:"fromPoolRef,omitempty"`
	// +optional
	FromPoolAnnotation *FromPoolAnnotation `json:"fromPoolAnnotation,omitempty"`
	// +optional
	Routes []NetworkDataRoutev6 `json:"routes,omitzero"`
}

// NetworkDataIPv4DHCP is an IPv4 network configured by DHCP.
type NetworkDataIPv4DHCP struct {
	ID   string `json:"id"`
	Link string `json:"link"`
	// +optional
	Routes []NetworkDataRoutev4 `json:"routes,omitzero"`
}

// NetworkDataIPv6DHCP is an IPv6 network configured by DHCP or SLAAC.
type NetworkDataIPv6DHCP struct {
	ID   string `json:"id"`
	Link string `json:"link"`
	// +optional
	Routes []NetworkDataRoutev6 `json:"routes,omitzero"`
}

// NetworkDataNetwork lists the networks.
type NetworkDataNetwork struct {
	// +optional
	IPv4 []NetworkDataIPv4 `json:"ipv4,omitzero"`
	// +optional
	IPv6 []NetworkDataIPv6 `json:"ipv6,omitzero"`
	// +optional
	IPv4DHCP []NetworkDataIPv4DHCP `json:"ipv4DHCP,omitzero"`
	// +optional
	IPv6DHCP []NetworkDataIPv6DHCP `json:"ipv6DHCP,omitzero"`
	// +optional
	IPv6SLAAC []NetworkDataIPv6DHCP `json:"ipv6SLAAC,omitzero"`
}
