// Package metal3data reconciles Metal3Data: for one host it claims an address in every pool the
// template names (ipam.metal3.io IPClaims, or Cluster API IPAddressClaims for any other IPAM
// provider), waits for them, renders the template with pkg/render, and writes the metaData and
// networkData Secrets. It renders once: after success it only re-creates a deleted Secret from
// the same inputs, so re-provisioning a host reproduces its original configuration. A rendered
// Metal3Data is checked against its host's switch ports (hostswitch.go) whenever the fabric
// changes them: HostSwitchMismatch says whether they agree. The outcome is reported in the
// claim's status too (claim.go, metal3dataclaim.Report), where it is rendered.
//
// The field indexes the data-templating reconcilers share are in internal/controller/dataindex.
package metal3data
