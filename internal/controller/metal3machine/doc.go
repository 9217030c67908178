// Package metal3machine reconciles Metal3Machines: it picks and claims a BareMetalHost, has
// baremetal-operator provision it with the machine's image and data, reports the host's
// addresses and provisioning to Cluster API, propagates pause to the host, sets providerID on the
// workload cluster's Node when no cloud provider does, and deprovisions and releases the host when
// the machine is deleted.
//
// The decisions (which host, what to write to it, which switch ports it waits for) are pure
// functions in hostselect.go, hostspec.go and fabric.go; the reconciler reads, calls them, and
// writes the machine through status.go (its spec and metadata, then its status).
package metal3machine
