// Package metal3machinetemplate keeps the Metal3Machines cloned from a Metal3MachineTemplate in
// step with it, as upstream CAPM3's template controller does: a change of the template's
// automatedCleaningMode is written to each of its machines (and from there, by the machine
// controller, to their hosts). Everything else in a machine's spec is fixed at creation; Cluster
// API rolls machines for those changes.
package metal3machinetemplate
