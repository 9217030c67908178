// Package metal3cluster reconciles Metal3Clusters: it reports the cluster's infrastructure as
// provisioned once the control plane endpoint is usable, mirrors failure domains for Cluster API,
// honours Cluster API's pause, and keeps the Metal3Cluster until its Metal3Machines are gone.
package metal3cluster
