// Package labelsync keeps chosen BareMetalHost labels in step on the workload cluster's Node,
// as upstream CAPM3's label sync controller does. The Metal3Cluster's annotation
// metal3.io/metal3-label-sync-prefixes lists label prefixes (comma-separated DNS subdomains, such
// as my-prefix.example.com); every host label under one of them is copied to the Node of the
// Machine the host runs, changed there when it changes on the host, and removed from the Node
// when it is removed from the host. Labels with other prefixes, on either side, are left alone.
//
// It is the one reconciler not in the skeleton (internal/controller/skeleton): it owns no object
// of the management cluster. The host it reads is BMO's, and it writes only the Node, in another
// cluster; nothing of the skeleton's patch, finalizer or conditions has anything to act on, and
// the rules that stop it (the watch filter on the host's Metal3Machine, BMO's pause on the host,
// Cluster API's pause on the Cluster and its Metal3Cluster) are read along the chain host ->
// Metal3Machine -> Machine -> Cluster that the sync needs anyway.
package labelsync
