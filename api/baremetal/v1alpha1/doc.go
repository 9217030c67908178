// Package v1alpha1 holds the part of baremetal-operator's metal3.io/v1alpha1 BareMetalHost that
// metalwire reads and writes.
//
// BMO owns BareMetalHost. These types model only our fields, so code must change a host with a
// patch computed from these types (client.MergeFrom or server-side apply), never with Update:
// an Update from this subset would drop every field BMO has and we do not model.
//
// The CRD generated from these types is for tests and dev mode only. It keeps unknown fields in
// spec and status, so a test can prove that nothing of BMO's is lost.
//
// +kubebuilder:object:generate=true
// +groupName=metal3.io
package v1alpha1
