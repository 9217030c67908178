// Package labelsync keeps chosen BareMetalHost labels in step on the workload cluster's Node,
// as upstream CAPM3's label sync controller does. The Metal3Cluster's annotation
// metal3.io/metal3-label-sync-prefixes lists label prefixes (comma-separated DNS subdomains, such
// as my-prefix.example.com); every host label under one of them is copied to the Node of the
// Machine the host runs, changed there when it changes on the host, and removed from the Node
// when it is removed from the host. Labels with other prefixes, on either side, are left alone.
package labelsync
