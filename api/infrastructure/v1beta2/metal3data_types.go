package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DataFinalizer lets the data controller delete the IPClaims and Secrets of a Metal3Data before
// the Metal3Data goes. The value is CAPM3's, so objects created by CAPM3 are cleaned up too.
const DataFinalizer = "metal3data.infrastructure.cluster.x-k8s.io"

// The rendered Secrets. BareMetalHost.spec.metaData and spec.networkData point at them, and BMO
// reads the keys below; the type keeps them apart from user Secrets in listings.
const (
	// DataSecretType is the type of every Secret the data and preprovisioning controllers write.
	DataSecretType corev1.SecretType = "infrastructure.cluster.x-k8s.io/secret"

	// DataSecretMetaDataKey holds the rendered metaData (a flat YAML map) in its Secret.
	DataSecretMetaDataKey = "metaData"

	// DataSecretNetworkDataKey holds the rendered network_data.json in its Secret.
	DataSecretNetworkDataKey = "networkData"

	// DataSecretRenderedLabel, with value DataSecretRenderedLabelValue, marks a Secret a
	// Metal3Data rendered (its metaData or networkData). The manager keeps only the metadata of
	// such Secrets in memory (names, labels, owners, the digest annotation), never their data:
	// its full Secret cache selects BMO's label without this one. Secrets written before
	// metalwire set it get it the next time the controller writes them.
	DataSecretRenderedLabel      = "metal3data.metalwire.io/rendered"
	DataSecretRenderedLabelValue = "true"
)

// Metal3Data conditions. The type names are prefixed because the Metal3Machine kinds in this
// package have conditions of their own.
const (
	// DataReadyCondition is True once both Secrets are written; it summarises the others.
	DataReadyCondition = "Ready"

	// DataIPAddressesReadyCondition is True once every pool the template names has given this
	// host an address (True at once when the template uses no pool).
	DataIPAddressesReadyCondition = "IPAddressesReady"

	// DataSecretsReadyCondition is True once the metaData and networkData Secrets exist.
	DataSecretsReadyCondition = "SecretsReady"

	// DataHostSwitchMismatchCondition is True when the rendered network data disagrees with
	// what the host's switch ports carry (a VLAN tagged on an access port, a bond over ports in
	// different VLANs, an LACP bond over ports in no LAG, ...): its message names each card, its
	// port and both sides. False when they agree; absent for hosts no ClusterNetwork uses. The
	// Metal3Machine shows it too. It does not stop the host.
	DataHostSwitchMismatchCondition = "HostSwitchMismatch"
)

// Metal3Data condition reasons. Every reason but DataRenderedReason comes with a message a
// person can act on; the controller retries the ones whose cause can change.
const (
	// DataRenderedReason: both Secrets are written.
	DataRenderedReason = "Rendered"

	// DataWaitingForIPAddressesReason: an IPClaim has no address yet (retried).
	DataWaitingForIPAddressesReason = "WaitingForIPAddresses"

	// DataPoolExhaustedReason: a pool has no free address (retried when the pool changes).
	DataPoolExhaustedReason = "PoolExhausted"

	// DataWaitingForHostReason: the Metal3Machine has no host yet, or the host's hardware
	// details that the template reads are missing (retried when the host changes).
	DataWaitingForHostReason = "WaitingForHost"

	// DataTemplateNotFoundReason: spec.template names no Metal3DataTemplate.
	DataTemplateNotFoundReason = "TemplateNotFound"

	// DataRenderFailedReason: the template cannot be rendered for this host, for example it
	// names a NIC the host does not have, or an annotation holds a malformed MAC.
	DataRenderFailedReason = "RenderFailed"

	// DataWaitingForVLANReason: a VLAN link takes its id from a ClusterNetwork network
	// (vlanIDFrom) whose VLAN the fabric controller has not assigned yet (retried when the
	// ClusterNetwork changes).
	DataWaitingForVLANReason = "WaitingForVLAN"

	// DataVLANSourceNotFoundReason: vlanIDFrom names a ClusterNetwork, or a network of it, that
	// does not exist (retried when the ClusterNetwork or the template changes).
	DataVLANSourceNotFoundReason = "VLANSourceNotFound"

	// DataWaitingForBondReason: a bond takes its members from a ClusterNetwork network
	// (bondFrom) whose cards the fabric controller has not given this host yet (retried when
	// the ClusterNetwork or the host's NIC changes).
	DataWaitingForBondReason = "WaitingForBond"

	// DataBondSourceNotFoundReason: bondFrom names a ClusterNetwork, or a network of it, that
	// does not exist or is not bonded, or a bonded card has no MAC (retried when they change).
	DataBondSourceNotFoundReason = "BondSourceNotFound"

	// DataSecretWriteFailedReason: the API server refused a Secret (retried).
	DataSecretWriteFailedReason = "SecretWriteFailed"

	// DataHostSwitchMismatchReason: the network data and the switch ports disagree.
	DataHostSwitchMismatchReason = "HostSwitchMismatch"

	// DataHostSwitchAgreeReason: the network data and the switch ports agree.
	DataHostSwitchAgreeReason = "HostSwitchAgree"

	// DataDeletingReason: the Metal3Data is being deleted and waits for its IPClaims to go.
	DataDeletingReason = "Deleting"
)

// Metal3DataSpec is one host's share of a Metal3DataTemplate: its index and its rendered Secrets.
// The template controller creates it; users do not.
//
// Index, claim and template are checked at this level: index is omitted from the JSON when it
// is 0, and a rule on an absent field would not run.
// +kubebuilder:validation:XValidation:rule="(has(self.index) ? self.index : 0) == (has(oldSelf.index) ? oldSelf.index : 0)",message="index is immutable: it is the host's position in the template and names its Secrets; delete the Metal3DataClaim to get a new index",fieldPath=".index"
type Metal3DataSpec struct {
	// index is this host's index in the template, unique among the template's Metal3Data:
	// the Metal3Data is named <template>-<index>, and metaData indexes render it.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Index *int32 `json:"index,omitempty"`

	// metaData is the rendered metaData Secret, once written.
	// +optional
	MetaData *corev1.SecretReference `json:"metaData,omitempty"`

	// networkData is the rendered networkData Secret, once written.
	// +optional
	NetworkData *corev1.SecretReference `json:"networkData,omitempty"`

	// claim is the Metal3DataClaim this Metal3Data was created for.
	// +required
	// +kubebuilder:validation:XValidation:rule="has(self.name) && self.name != ''",message="claim.name is required: name the Metal3DataClaim, in the same namespace"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="claim is immutable: a Metal3Data belongs to one Metal3DataClaim for its whole life; delete the claim and let a new Metal3Data be created"
	Claim corev1.ObjectReference `json:"claim"`

	// template is the Metal3DataTemplate this Metal3Data was rendered from.
	// +required
	// +kubebuilder:validation:XValidation:rule="has(self.name) && self.name != ''",message="template.name is required: name the Metal3DataTemplate, in the same namespace"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="template is immutable: a Metal3Data is rendered once from one template; point the Metal3MachineTemplate at the new template and roll the machines"
	Template corev1.ObjectReference `json:"template"`
}

// Metal3DataStatus says whether the Secrets are rendered, and if not, why.
type Metal3DataStatus struct {
	// ready is true once the metaData and networkData Secrets are written.
	// +optional
	Ready bool `json:"ready"`

	// errorMessage says why rendering failed, in words a person can act on. It is cleared when
	// rendering succeeds.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=10240
	ErrorMessage *string `json:"errorMessage,omitempty"`

	// conditions describe the rendering: Ready, IPAddressesReady, SecretsReady.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitzero"`

	// lastUpdated is when the status last changed.
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`
}

// Metal3Data is the metaData and networkData rendered for one Metal3Machine from a
// Metal3DataTemplate. It is rendered once and never again, so re-provisioning a host reproduces
// its original configuration.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3datas,scope=Namespaced,categories=cluster-api,shortName=m3d;m3data;m3datas;metal3d;metal3data
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Index",type="integer",JSONPath=".spec.index",description="Index of the host in the template"
// +kubebuilder:printcolumn:name="Template",type="string",JSONPath=".spec.template.name",description="Metal3DataTemplate rendered"
// +kubebuilder:printcolumn:name="Claim",type="string",JSONPath=".spec.claim.name",description="Metal3DataClaim served"
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready",description="Secrets rendered"
// +kubebuilder:printcolumn:name="Error",type="string",JSONPath=".status.errorMessage",description="Why rendering failed"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type Metal3Data struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec names the claim, the template and the rendered Secrets.
	// +required
	Spec Metal3DataSpec `json:"spec"`

	// status says whether the Secrets are rendered.
	// +optional
	Status Metal3DataStatus `json:"status,omitempty,omitzero"`
}

// Metal3DataList is a list of Metal3Data.
//
// +kubebuilder:object:root=true
type Metal3DataList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3Data `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Metal3Data{}, &Metal3DataList{})
}
