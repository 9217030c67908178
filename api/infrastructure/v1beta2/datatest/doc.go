// Package datatest checks the admission rules of the data kinds (Metal3DataTemplate,
// Metal3DataClaim, Metal3Data, Metal3PreprovisioningDataTemplate) against a real API server:
// every documented validation message, the defaults, and the examples in docs/api.
//
// It is a package of its own because the v1beta2 package's envtest TestMain belongs to the
// Metal3Cluster and Metal3Machine tests, and a package has one TestMain.
package datatest
