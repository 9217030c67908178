// Package commonpool runs examples/cluster in dev mode with IP reuse, its hosts pre-provisioned
// from the cluster's own pool (scenario 1 of docs/preprovisioning.md): each host must keep the
// address it was inspected with once provisioned, and again after it is re-provisioned. It has
// a package of its own because the data controllers run with --ip-reuse here.
package commonpool
