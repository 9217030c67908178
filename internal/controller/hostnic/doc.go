// Package hostnic makes a NIC object for each BareMetalHost from the switch data
// baremetal-operator keeps about it: the host's spec.networkInterfaces[].switchPort, else the
// LLDP neighbours inspection saw, matched to the switches of the namespace's NetworkDevices. A
// NIC object a person wrote for the host always wins; a generated one follows the host.
package hostnic
