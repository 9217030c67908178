// Package oc holds Go structs that ygot v0.36.0 generated from the OpenConfig YANG modules the
// test gNMI target checks every Set against: openconfig-interfaces, openconfig-if-ethernet,
// openconfig-if-aggregate and openconfig-vlan (the revisions ygot v0.36.0 carries in
// demo/getting_started/yang), plus metalwire-network-instance.yang, the network-instance subtree
// that holds VLANs, metalwire-acl.yang, the part of openconfig-acl the driver writes (acl-sets and
// their binding to interfaces, with openconfig-acl's node names, keys, identities and types), and
// metalwire-lacp.yang, the part of openconfig-lacp that configures an aggregate's LACP. Regenerate
// with go generate in this folder (it reads the YANG files from the module cache).
package oc

//go:generate ./gen.sh
