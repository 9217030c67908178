package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Metal3PreprovisioningDataTemplate is metalwire's implementation of the pre-provisioning network
// data proposal (seed 001): upstream Metal3 only proposed it. Hosts opt in with the
// bmov1.PreprovisioningNetworkDataReferenceAnnotation, whose value is
// PreprovisioningDataTemplateReferencePrefix + the template's name.

// PreprovisioningDataTemplateFinalizer lets the preprovisioning controller release the hosts'
// IPClaims before the template goes. It is <domain>/<name>, not CAPM3's <kind>.<group>: that form
// would be 66 characters, and the API server refuses a finalizer without a slash longer than 63.
const PreprovisioningDataTemplateFinalizer = "infrastructure.cluster.x-k8s.io/metal3preprovisioningdatatemplate"

// Names the preprovisioning controller reads and writes on hosts and Secrets.
const (
	// PreprovisioningDataTemplateReferencePrefix starts the value of the host annotation that
	// names a template: <resource>.<group>/<name>, the template in the host's namespace.
	PreprovisioningDataTemplateReferencePrefix = "metal3preprovisioningdatatemplates.infrastructure.cluster.x-k8s.io/"

	// PreprovisioningPausedAnnotationValue is the value of the BareMetalHost paused annotation
	// that holds a host's inspection until its pre-provisioning data exists. The controller
	// removes the annotation only when it still has this value, so another tool's pause stays.
	PreprovisioningPausedAnnotationValue = "metal3.io/preprovisioning"

	// PreprovisioningSecretSuffix ends the name of a host's pre-provisioning networkData Secret:
	// <host>-preprov-networkdata.
	PreprovisioningSecretSuffix = "-preprov-networkdata" //nolint:gosec // a Secret name suffix, not a credential

	// PreprovisioningDataTemplateLabel on a Secret names the template that rendered it, so the
	// controller finds its Secrets through a label selector instead of listing every Secret.
	PreprovisioningDataTemplateLabel = "infrastructure.cluster.x-k8s.io/preprovisioning-data-template"

	// BMOEnvironmentLabel with value BMOEnvironmentLabelValue makes a Secret visible to BMO,
	// whose cache only holds Secrets carrying it.
	BMOEnvironmentLabel      = "environment.metal3.io"
	BMOEnvironmentLabelValue = "baremetal"
)

// Metal3PreprovisioningDataTemplate conditions.
const (
	// PreprovisioningReadyCondition is True when every host that references the template has
	// its Secret and preprovisioningNetworkDataName set.
	PreprovisioningReadyCondition = "Ready"
)

// Metal3PreprovisioningDataTemplate condition reasons, also used as status.errors[].reason.
const (
	// PreprovisioningAllHostsRenderedReason: every referencing host is rendered.
	PreprovisioningAllHostsRenderedReason = "AllHostsRendered"

	// PreprovisioningNoHostsReason: no host references the template yet.
	PreprovisioningNoHostsReason = "NoHosts"

	// PreprovisioningHostsFailedReason: at least one host failed; status.errors says which.
	PreprovisioningHostsFailedReason = "HostsFailed"

	// PreprovisioningBadReferenceReason: a host's annotation is malformed or names another kind.
	PreprovisioningBadReferenceReason = "BadReference"

	// PreprovisioningWaitingForIPAddressesReason: a host's IPClaim has no address yet (retried).
	PreprovisioningWaitingForIPAddressesReason = "WaitingForIPAddresses"

	// PreprovisioningPoolExhaustedReason: a pool has no free address (retried when it changes).
	PreprovisioningPoolExhaustedReason = "PoolExhausted"

	// PreprovisioningRenderFailedReason: the template cannot be rendered for a host, for
	// example it names a NIC the host's hardware details do not list.
	PreprovisioningRenderFailedReason = "RenderFailed"

	// PreprovisioningLiveISOReason: the host boots a live ISO, which cannot receive injected
	// network data. The host is still rendered; this is a warning.
	PreprovisioningLiveISOReason = "LiveISONotSupported"
)

// Metal3PreprovisioningDataTemplateSpec is the template of the network data a host receives
// before inspection. No Machine exists yet, so everything must come from the BareMetalHost: MACs
// from fromBootMAC, fromAnnotation or (once inspected) fromHostInterface, and annotations from
// the host only.
// +kubebuilder:validation:XValidation:rule="!has(self.preprovisioningNetworkData) || !has(self.preprovisioningNetworkData.links) || ((!has(self.preprovisioningNetworkData.links.ethernets) || self.preprovisioningNetworkData.links.ethernets.all(x, !has(x.macAddress.fromAnnotation) || x.macAddress.fromAnnotation.object == 'baremetalhost')) && (!has(self.preprovisioningNetworkData.links.bonds) || self.preprovisioningNetworkData.links.bonds.all(x, !has(x.macAddress) || !has(x.macAddress.fromAnnotation) || x.macAddress.fromAnnotation.object == 'baremetalhost')) && (!has(self.preprovisioningNetworkData.links.bridges) || self.preprovisioningNetworkData.links.bridges.all(x, !has(x.macAddress) || !has(x.macAddress.fromAnnotation) || x.macAddress.fromAnnotation.object == 'baremetalhost')) && (!has(self.preprovisioningNetworkData.links.vlans) || self.preprovisioningNetworkData.links.vlans.all(x, !has(x.macAddress) || !has(x.macAddress.fromAnnotation) || x.macAddress.fromAnnotation.object == 'baremetalhost')))",message="macAddress.fromAnnotation.object must be baremetalhost: before provisioning there is no Machine or Metal3Machine to read an annotation from",fieldPath=".preprovisioningNetworkData.links"
// +kubebuilder:validation:XValidation:rule="!has(self.preprovisioningNetworkData) || !has(self.preprovisioningNetworkData.networks) || ((!has(self.preprovisioningNetworkData.networks.ipv4) || self.preprovisioningNetworkData.networks.ipv4.all(x, (!has(x.fromPoolAnnotation) || x.fromPoolAnnotation.object == 'baremetalhost') && (!has(x.routes) || x.routes.all(r, !has(r.gateway.fromPoolAnnotation) || r.gateway.fromPoolAnnotation.object == 'baremetalhost')))) && (!has(self.preprovisioningNetworkData.networks.ipv6) || self.preprovisioningNetworkData.networks.ipv6.all(x, (!has(x.fromPoolAnnotation) || x.fromPoolAnnotation.object == 'baremetalhost') && (!has(x.routes) || x.routes.all(r, !has(r.gateway.fromPoolAnnotation) || r.gateway.fromPoolAnnotation.object == 'baremetalhost')))) && (!has(self.preprovisioningNetworkData.networks.ipv4DHCP) || self.preprovisioningNetworkData.networks.ipv4DHCP.all(x, (!has(x.routes) || x.routes.all(r, !has(r.gateway.fromPoolAnnotation) || r.gateway.fromPoolAnnotation.object == 'baremetalhost')))) && (!has(self.preprovisioningNetworkData.networks.ipv6DHCP) || self.preprovisioningNetworkData.networks.ipv6DHCP.all(x, (!has(x.routes) || x.routes.all(r, !has(r.gateway.fromPoolAnnotation) || r.gateway.fromPoolAnnotation.object == 'baremetalhost')))) && (!has(self.preprovisioningNetworkData.networks.ipv6SLAAC) || self.preprovisioningNetworkData.networks.ipv6SLAAC.all(x, (!has(x.routes) || x.routes.all(r, !has(r.gateway.fromPoolAnnotation) || r.gateway.fromPoolAnnotation.object == 'baremetalhost')))))",message="fromPoolAnnotation.object must be baremetalhost: before provisioning there is no Machine or Metal3Machine to read an annotation from",fieldPath=".preprovisioningNetworkData.networks"
type Metal3PreprovisioningDataTemplateSpec struct {
	// clusterName is the Cluster the template is meant for, if any. Pre-provisioning happens
	// before a host belongs to a cluster, so this is informative only.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	ClusterName string `json:"clusterName,omitempty"`

	// preprovisioningNetworkData is the template of the network_data.json given to Ironic when
	// the host is registered, with the schema of Metal3DataTemplate.spec.networkData. There is
	// no metaData: Ironic's node API takes none.
	// +required
	PreprovisioningNetworkData *NetworkData `json:"preprovisioningNetworkData"`
}

// PreprovisioningHost is one host rendered from the template.
type PreprovisioningHost struct {
	// name of the BareMetalHost.
	Name string `json:"name"`

	// secretName is the Secret holding the host's network data, set as the host's
	// spec.preprovisioningNetworkDataName.
	SecretName string `json:"secretName"`

	// addresses are the IP addresses rendered for the host, from its pools.
	// +optional
	Addresses []string `json:"addresses,omitzero"`
}

// PreprovisioningHostError is why one host could not be rendered.
type PreprovisioningHostError struct {
	// host is the BareMetalHost's name.
	Host string `json:"host"`

	// reason is a CamelCase word, such as BadReference or PoolExhausted.
	Reason string `json:"reason"`

	// message says what is wrong and what to do.
	Message string `json:"message"`
}

// Metal3PreprovisioningDataTemplateStatus lists the hosts rendered and the hosts that failed.
type Metal3PreprovisioningDataTemplateStatus struct {
	// hosts are the hosts rendered, by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Hosts []PreprovisioningHost `json:"hosts,omitzero"`

	// errors are the hosts that reference the template and could not be rendered, by host.
	// +optional
	// +listType=map
	// +listMapKey=host
	Errors []PreprovisioningHostError `json:"errors,omitzero"`

	// rendered is the number of hosts rendered.
	// +optional
	Rendered int32 `json:"rendered"`

	// failed is the number of hosts that could not be rendered.
	// +optional
	Failed int32 `json:"failed"`

	// conditions describe the template: Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitzero"`

	// lastUpdated is when the status last changed.
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`
}

// Metal3PreprovisioningDataTemplate renders the network data BareMetalHosts need before
// inspection, for networks without DHCP. Hosts reference it with the annotation
// baremetalhost.metal3.io/preprovisioningnetworkdata-reference.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3preprovisioningdatatemplates,scope=Namespaced,categories=cluster-api,shortName=m3pdt;metal3pdt
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Rendered",type="integer",JSONPath=".status.rendered",description="Hosts rendered"
// +kubebuilder:printcolumn:name="Failed",type="integer",JSONPath=".status.failed",description="Hosts that could not be rendered"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type Metal3PreprovisioningDataTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the template.
	// +required
	Spec Metal3PreprovisioningDataTemplateSpec `json:"spec"`

	// status lists the hosts rendered and the hosts that failed.
	// +optional
	Status Metal3PreprovisioningDataTemplateStatus `json:"status,omitempty,omitzero"`
}

// Metal3PreprovisioningDataTemplateList is a list of Metal3PreprovisioningDataTemplates.
//
// +kubebuilder:object:root=true
type Metal3PreprovisioningDataTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3PreprovisioningDataTemplate `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Metal3PreprovisioningDataTemplate{}, &Metal3PreprovisioningDataTemplateList{})
}
