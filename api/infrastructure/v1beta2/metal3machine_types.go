package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Names shared with upstream CAPM3, so that objects it created are recognised.
const (
	// MachineFinalizer lets the Metal3Machine controller release the host before the
	// Metal3Machine goes.
	MachineFinalizer = "metal3machine.infrastructure.cluster.x-k8s.io"

	// HostAnnotation on a Metal3Machine names its BareMetalHost as "<namespace>/<name>".
	HostAnnotation = "metal3.io/BareMetalHost"

	// BareMetalHostPausedByValue is the value of BMO's paused annotation
	// (baremetalhost.metal3.io/paused) when metalwire pauses a host because its cluster is
	// paused; metalwire removes only pauses carrying this value.
	BareMetalHostPausedByValue = "metal3.io/capm3"

	// ClonedFromGroupKind is the value of Cluster API's cloned-from-groupkind annotation on a
	// Metal3Machine created from a Metal3MachineTemplate.
	ClonedFromGroupKind = "Metal3MachineTemplate.infrastructure.cluster.x-k8s.io"
)

// Metal3Machine condition types and reasons, named as upstream CAPM3 v1beta2 names them.
const (
	// Metal3MachineReadyCondition summarises the Metal3Machine's state for Cluster API.
	Metal3MachineReadyCondition = clusterv1.ReadyCondition
	// Metal3MachineReadyReason: every readiness criterion is met.
	Metal3MachineReadyReason = clusterv1.ReadyReason
	// Metal3MachineNotReadyReason: at least one readiness criterion is not met.
	Metal3MachineNotReadyReason = clusterv1.NotReadyReason
	// Metal3MachineReadyUnknownReason: a readiness criterion is unknown and none is unmet.
	Metal3MachineReadyUnknownReason = clusterv1.ReadyUnknownReason

	// AssociateBareMetalHostCondition says whether a BareMetalHost has been claimed.
	AssociateBareMetalHostCondition = "AssociateBareMetalHost"
	// AssociateBareMetalHostSuccessReason: a host is claimed.
	AssociateBareMetalHostSuccessReason = "AssociateBareMetalHostSuccess"
	// AssociateBareMetalHostFailedReason: no host could be claimed; the message says why
	// (no host matches hostSelector, none is available, ...).
	AssociateBareMetalHostFailedReason = "AssociateBareMetalHostFailed"
	// WaitingForClusterInfrastructureReadyReason: the Cluster's infrastructure is not
	// provisioned yet.
	WaitingForClusterInfrastructureReadyReason = clusterv1.WaitingForClusterInfrastructureReadyReason
	// WaitingForBootstrapDataReason: the Machine's bootstrap data Secret is not there yet.
	WaitingForBootstrapDataReason = clusterv1.WaitingForBootstrapDataReason
	// WaitingForMetal3MachineOwnerRefReason: no Machine owns the Metal3Machine yet.
	WaitingForMetal3MachineOwnerRefReason = "WaitingForMetal3MachineOwnerRef"
	// WaitingForMetal3ClusterReason: the cluster's Metal3Cluster is missing or not provisioned.
	// (Upstream spells it WaitingforMetal3Cluster; the value is kept for compatibility.)
	WaitingForMetal3ClusterReason = "WaitingforMetal3Cluster"
	// BareMetalHostPauseAnnotationSetFailedReason: the host could not be paused.
	BareMetalHostPauseAnnotationSetFailedReason = "BareMetalHostPauseAnnotationSetFailed"
	// BareMetalHostPauseAnnotationRemoveFailedReason: the host could not be unpaused.
	BareMetalHostPauseAnnotationRemoveFailedReason = "BareMetalHostPauseAnnotationRemoveFailed"

	// AssociateMetal3MachineMetaDataCondition says whether the machine's Metal3DataClaim exists.
	AssociateMetal3MachineMetaDataCondition = "AssociateMetal3MachineMetaData"
	// AssociateMetal3MachineMetaDataSuccessReason: the claim exists.
	AssociateMetal3MachineMetaDataSuccessReason = "AssociateMetal3MachineMetaDataSuccess"
	// AssociateMetal3MachineMetaDataFailedReason: the claim could not be created.
	AssociateMetal3MachineMetaDataFailedReason = "AssociateMetal3MachineMetaDataFailed"
	// DisassociateM3MetaDataFailedReason: the claim could not be released on delete.
	DisassociateM3MetaDataFailedReason = "DisassociateM3MetaDataFailed"

	// Metal3MachineDataReadyCondition (type Metal3DataReady) says whether the metaData and
	// networkData Secrets the host needs are known.
	Metal3MachineDataReadyCondition = "Metal3DataReady"
	// WaitingForMetal3DataReason: the Metal3Data or its Secrets are not rendered yet.
	WaitingForMetal3DataReason = "WaitingForMetal3Data"
	// Metal3DataSecretsReadyReason: the rendered Secrets are ready.
	Metal3DataSecretsReadyReason = "Metal3DataSecretsReady"
	// SecretsSetExternallyReason: spec.metaData and spec.networkData name user Secrets.
	SecretsSetExternallyReason = "SecretsSetExternally"

	// KubernetesNodeReadyCondition says whether the workload cluster's Node carries this
	// machine's providerID (set by metalwire when the cloud provider is disabled).
	KubernetesNodeReadyCondition = "KubernetesNodeReady"
	// MissingBMHReason: the BareMetalHost named by the machine is gone.
	MissingBMHReason = "MissingBMH"
	// SettingProviderIDOnNodeFailedReason: the Node could not be found or patched.
	SettingProviderIDOnNodeFailedReason = "SettingProviderIDOnNodeFailed"

	// Metal3MachineDeletingReason: the Metal3Machine is being deleted (the host deprovisions).
	Metal3MachineDeletingReason = clusterv1.DeletingReason
	// Metal3MachineDeletingFailedReason: deletion hit a problem and is retried.
	Metal3MachineDeletingFailedReason = "DeletionFailed"
)

// AutomatedCleaningMode says whether Ironic wipes the host's disks around provisioning.
// +kubebuilder:validation:Enum=metadata;disabled
type AutomatedCleaningMode string

// The automated cleaning modes, as BMO defines them.
const (
	// CleaningModeMetadata wipes partition tables and metadata before and after provisioning.
	CleaningModeMetadata AutomatedCleaningMode = "metadata"
	// CleaningModeDisabled skips cleaning.
	CleaningModeDisabled AutomatedCleaningMode = "disabled"
)

// Metal3MachineSpec is the desired state of a Metal3Machine: which host to pick and what to
// put on it.
// +kubebuilder:validation:XValidation:rule=`(has(self.customDeploy) && size(self.customDeploy.method) > 0) || (has(self.image) && has(self.image.url) && size(self.image.url) > 0)`,message=`required unless customDeploy is set: the URL of the image to write to the host's disk, such as http://images.example.com/ubuntu.qcow2`,fieldPath=`.image.url`,reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule=`(has(self.customDeploy) && size(self.customDeploy.method) > 0) || (has(self.image) && has(self.image.diskFormat) && self.image.diskFormat == 'live-iso') || (has(self.image) && has(self.image.url) && self.image.url.lowerAscii().startsWith('oci://')) || (has(self.image) && has(self.image.checksum) && size(self.image.checksum) > 0)`,message=`required unless image.diskFormat is live-iso or image.url is an oci:// image (or customDeploy is set): the image's md5/sha256/sha512 sum, or the URL of a file holding it`,fieldPath=`.image.checksum`,reason=FieldValueRequired
type Metal3MachineSpec struct {
	// ProviderID is the machine's ID for Cluster API, metal3://<namespace>/<host>/<metal3machine>,
	// set by the controller once a host is claimed.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	ProviderID string `json:"providerID,omitempty"`

	// Image to deploy. Required (url and checksum) unless customDeploy is set; checksum is not
	// needed for diskFormat live-iso, and must be left out for an oci:// image (its registry
	// digest verifies it), as upstream.
	// +optional
	Image Image `json:"image,omitempty,omitzero"`

	// CustomDeploy runs a custom deploy step of the deploy ramdisk instead of writing image.
	// +optional
	CustomDeploy *CustomDeploy `json:"customDeploy,omitempty"`

	// UserData names the Secret holding the host's cloud-init user data. Unset, the CAPI
	// Machine's bootstrap data Secret is used. The namespace defaults to the Metal3Machine's.
	// +optional
	UserData *corev1.SecretReference `json:"userData,omitempty"`

	// HostSelector limits the BareMetalHosts this machine may claim.
	// +optional
	HostSelector HostSelector `json:"hostSelector,omitempty,omitzero"`

	// DataTemplate names the Metal3DataTemplate that renders this machine's metaData and
	// networkData. Keys the template renders win over spec.metaData.
	// +optional
	DataTemplate *corev1.ObjectReference `json:"dataTemplate,omitempty"`

	// MetaData names a Secret with cloud-init meta data given by the user.
	// +optional
	MetaData *corev1.SecretReference `json:"metaData,omitempty"`

	// NetworkData names a Secret with network data (network_data.json) given by the user.
	// +optional
	NetworkData *corev1.SecretReference `json:"networkData,omitempty"`

	// AutomatedCleaningMode is copied to the host: disabled skips disk cleaning around
	// provisioning and deprovisioning; metadata (BMO's default) wipes disk metadata.
	// +optional
	AutomatedCleaningMode *AutomatedCleaningMode `json:"automatedCleaningMode,omitempty"`

	// FailureDomain is the Cluster API failure domain the machine is placed in.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	FailureDomain string `json:"failureDomain,omitempty"`
}

// Metal3MachineInitializationStatus reports the Cluster API v1beta2 provisioning signal.
// +kubebuilder:validation:MinProperties=1
type Metal3MachineInitializationStatus struct {
	// Provisioned is true once the host is provisioned with this machine's image and data.
	// Cluster API reads it; it never goes back to false.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// Metal3MachineStatus is the observed state of a Metal3Machine.
type Metal3MachineStatus struct {
	// Initialization is the Cluster API v1beta2 contract's provisioning signal.
	// +optional
	Initialization Metal3MachineInitializationStatus `json:"initialization,omitempty,omitzero"`

	// Addresses of the host, from its inspection data; Cluster API copies them to the Machine.
	// +optional
	Addresses clusterv1.MachineAddresses `json:"addresses,omitzero"`

	// UserData is the user data Secret actually given to the host.
	// +optional
	UserData *corev1.SecretReference `json:"userData,omitempty"`

	// RenderedData is the Metal3Data rendered for this machine from spec.dataTemplate.
	// +optional
	RenderedData *corev1.ObjectReference `json:"renderedData,omitempty"`

	// MetaData is the meta data Secret actually given to the host.
	// +optional
	MetaData *corev1.SecretReference `json:"metaData,omitempty"`

	// NetworkData is the network data Secret actually given to the host.
	// +optional
	NetworkData *corev1.SecretReference `json:"networkData,omitempty"`

	// Conditions: Ready (summarising AssociateBareMetalHost and BareMetalHostProvisioned),
	// AssociateBareMetalHost, BareMetalHostProvisioned, AssociateMetal3MachineMetaData,
	// Metal3DataReady, KubernetesNodeReady, Paused, and SwitchPortsReady in a cluster with a
	// ClusterNetwork.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitzero"`

	// LastUpdated is when the controller last changed this status.
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`

	// Deprecated holds the v1beta1 contract's status fields, as upstream CAPM3's v1beta2 does: a
	// v1beta1 client's conditions and failure fields. metalwire does not maintain them.
	// +optional
	Deprecated *DeprecatedStatus `json:"deprecated,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3machines,scope=Namespaced,categories=cluster-api,shortName=m3m;m3machine;m3machines;metal3m;metal3machine
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta2"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels.cluster\\.x-k8s\\.io/cluster-name",description="Cluster this Metal3Machine belongs to"
// +kubebuilder:printcolumn:name="Provisioned",type="boolean",JSONPath=".status.initialization.provisioned",description="The host is provisioned"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=`.status.conditions[?(@.type=="Ready")].status`,description="Ready condition"
// +kubebuilder:printcolumn:name="ProviderID",type="string",JSONPath=".spec.providerID",description="Provider ID"
// +kubebuilder:printcolumn:name="BareMetalHost",type="string",JSONPath=".metadata.annotations.metal3\\.io/BareMetalHost",description="Claimed BareMetalHost (namespace/name)"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"

// Metal3Machine is the Cluster API infrastructure machine for bare metal: it claims a
// BareMetalHost and has BMO provision it with an image, user data, meta data and network data.
type Metal3Machine struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// +optional
	Spec Metal3MachineSpec `json:"spec,omitempty,omitzero"`
	// +optional
	Status Metal3MachineStatus `json:"status,omitempty,omitzero"`
}

// GetConditions returns the conditions, for Cluster API's conditions utilities.
func (m *Metal3Machine) GetConditions() []metav1.Condition {
	return m.Status.Conditions
}

// SetConditions sets the conditions, for Cluster API's conditions utilities.
func (m *Metal3Machine) SetConditions(conditions []metav1.Condition) {
	m.Status.Conditions = conditions
}

// +kubebuilder:object:root=true

// Metal3MachineList is a list of Metal3Machines.
type Metal3MachineList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3Machine `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Metal3Machine{}, &Metal3MachineList{})
}
