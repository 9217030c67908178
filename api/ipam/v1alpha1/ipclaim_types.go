package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IPClaimSpec names the pool to take an address from. A specific address may be requested with
// the ipAddress annotation (IPAddressAnnotation).
type IPClaimSpec struct {
	// Pool is the IPPool to take the address from, in the claim's namespace. Its name cannot
	// change: the address already given belongs to that pool.
	// +kubebuilder:validation:XValidation:rule="has(self.name) && size(self.name) > 0",message="pool.name must name the IPPool to take an address from"
	// +kubebuilder:validation:XValidation:rule="self.name == oldSelf.name",message="pool.name is immutable: the claim already holds an address from that pool; delete the claim and create a new one for another pool"
	Pool corev1.ObjectReference `json:"pool"`
}

// IPClaimStatus says which address the claim got, or why it has none.
type IPClaimStatus struct {
	// Address is the IPAddress given to this claim.
	// +optional
	Address *corev1.ObjectReference `json:"address,omitempty"`

	// ErrorMessage says why no address could be given, as upstream reports it.
	// +optional
	ErrorMessage *string `json:"errorMessage,omitempty"`

	// Conditions say whether the claim holds an address (Ready) and why not.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// IPClaim asks an IPPool for one address; the answer is an IPAddress object.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=ipclaims,scope=Namespaced,categories=cluster-api,shortName=ipc;ipclaim;m3ipc;m3ipclaim;m3ipclaims;metal3ipc;metal3ipclaim;metal3ipclaims
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Pool",type="string",JSONPath=".spec.pool.name",description="IPPool the address comes from"
// +kubebuilder:printcolumn:name="Address",type="string",JSONPath=".status.address.name",description="IPAddress given to the claim"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description="Whether the claim holds an address"
// +kubebuilder:printcolumn:name="Error",type="string",JSONPath=".status.errorMessage",description="Why no address could be given"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type IPClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec   IPClaimSpec   `json:"spec"`
	Status IPClaimStatus `json:"status,omitempty"`
}

// IPClaimList is a list of IPClaims.
//
// +kubebuilder:object:root=true
type IPClaimList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []IPClaim `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &IPClaim{}, &IPClaimList{})
}
