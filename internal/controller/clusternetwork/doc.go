// Package clusternetwork reconciles ClusterNetworks: it assigns each network a VLAN id (held by a
// Lease per NetworkDevice and id, so the API server refuses a second holder), finds the hosts
// whose NICs fit (status.available), turns the selections Metal3Machines record on NICs into NIC
// statuses that the networkdevice controller configures on the switches, and reports each
// selected host's state from what that controller recorded.
package clusternetwork
