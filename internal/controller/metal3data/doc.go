// Package metal3data reconciles Metal3Data: for one host it claims an address in every pool the
// template names (ipam.metal3.io IPClaims, or Cluster API IPAddressClaims for any other IPAM
// provider), waits for them, renders the template with pkg/render, and writes the metaData and
// networkData Secrets. It renders once: after success it only re-creates a deleted Secret from
// the same inputs, so re-provisioning a host reproduces its original configuration.
//
// It also holds the field indexes the three data-templating reconcilers share (indexes.go), so
// that no reconcile lists every Metal3Data, claim or machine of a namespace.
package metal3data
