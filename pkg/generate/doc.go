// Package generate is the pure part of `metalwire generate`, the client-side generator of the
// IPAM study's phase 1: it reads the user's one file (networks, an os-net-config template per
// logical unit, a MAC mapping per node), allocates static addresses against the address state,
// renders each node's os-net-config with Jinja2, and builds the node's Cluster API objects; for
// phase 2 it turns the same file into IPPools and Metal3DataTemplates. It has no Kubernetes
// client: internal/generateapply keeps the state in the cluster and applies the objects.
package generate
