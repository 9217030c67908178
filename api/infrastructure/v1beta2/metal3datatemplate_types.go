package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DataTemplateFinalizer lets the template controller release indexes before the template goes.
const DataTemplateFinalizer = "metal3datatemplate.infrastructure.cluster.x-k8s.io"

// Metal3DataTemplateSpec is a template of the metaData and networkData each host receives.
// Both are immutable once created: hosts already rendered keep what they got, and a changed
// template is a new template (roll the nodes to use it).
//
// The immutability rules sit here, not on the fields: a rule on an optional field only runs when
// the old and the new object both have it, so removing or adding metaData would slip past.
// +kubebuilder:validation:XValidation:rule="has(self.metaData) == has(oldSelf.metaData) && (!has(self.metaData) || self.metaData == oldSelf.metaData)",message="metaData is immutable: hosts already rendered keep their data; create a new Metal3DataTemplate and point the Metal3MachineTemplate at it",fieldPath=".metaData"
// +kubebuilder:validation:XValidation:rule="has(self.networkData) == has(oldSelf.networkData) && (!has(self.networkData) || self.networkData == oldSelf.networkData)",message="networkData is immutable: hosts already rendered keep their data; create a new Metal3DataTemplate and point the Metal3MachineTemplate at it",fieldPath=".networkData"
// +kubebuilder:validation:XValidation:rule="has(self.osNetConfig) == has(oldSelf.osNetConfig) && (!has(self.osNetConfig) || self.osNetConfig == oldSelf.osNetConfig)",message="osNetConfig is immutable: hosts already rendered keep their data; create a new Metal3DataTemplate and point the Metal3MachineTemplate at it",fieldPath=".osNetConfig"
// +kubebuilder:validation:XValidation:rule="!has(self.osNetConfig) || has(self.networkData)",message="osNetConfig needs networkData: its files are written into the networkData Secret beside network_data.json; add networkData (metalwire generate --templates writes both)",fieldPath=".osNetConfig"
type Metal3DataTemplateSpec struct {
	// clusterName is the Cluster the template belongs to.
	// +optional
	ClusterName string `json:"clusterName,omitempty"`

	// metaData is the template of the metaData Secret.
	// +optional
	MetaData *MetaData `json:"metaData,omitempty"`

	// networkData is the template of the networkData Secret (network_data.json).
	// +optional
	NetworkData *NetworkData `json:"networkData,omitempty"`

	// osNetConfig (a metalwire extension) is an os-net-config template rendered for each host
	// into the networkData Secret's osNetConfig and osNetConfigMapping keys, in place of the
	// os-net-config written from networkData. See OSNetConfigTemplate.
	// +optional
	OSNetConfig *OSNetConfigTemplate `json:"osNetConfig,omitempty"`
}

// IndexEntry records the index given to one claim.
type IndexEntry struct {
	// name is the claim's (and Metal3Machine's) name.
	Name string `json:"name"`
	// index is the index given.
	Index int32 `json:"index"`
}

// Metal3DataTemplateStatus records which claims hold which indexes.
type Metal3DataTemplateStatus struct {
	// lastUpdated is when the status last changed.
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`

	// indexes lists the index of every claim of the template.
	// +optional
	// +listType=map
	// +listMapKey=index
	Indexes []IndexEntry `json:"indexes,omitzero"`

	// conditions describe the template's state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitzero"`
}

// Metal3DataTemplate renders per-host metaData and networkData for the Metal3Machines that
// reference it.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3datatemplates,scope=Namespaced,categories=cluster-api,shortName=m3dt;m3datatemplate;m3datatemplates;metal3dt;metal3datatemplate
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels.cluster\\.x-k8s\\.io/cluster-name",description="Cluster the template belongs to"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type Metal3DataTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the template.
	// +optional
	Spec Metal3DataTemplateSpec `json:"spec,omitempty,omitzero"`

	// status records the indexes handed out.
	// +optional
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
