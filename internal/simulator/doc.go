// Package simulator is a stand-in for Metal3's baremetal-operator (BMO), for dev mode and
// end-to-end tests only. It is not BMO and talks to no hardware: it creates BareMetalHosts with
// made-up but believable hardware, moves them through BMO's provisioning states on the same
// triggers BMO uses (spec.image, spec.online, spec.consumerRef, the paused and detached
// annotations), and writes the files a real host would boot with to a directory, so the
// output of metalwire's controllers can be read where a host would read it.
//
// It implements the pre-provisioning proposal's BMO behaviour that upstream BMO lacks: a host
// annotated with baremetalhost.metal3.io/preprovisioningnetworkdata-reference is not inspected
// until the Secret named by spec.preprovisioningNetworkDataName exists.
//
// It writes BareMetalHost status only, through the status subresource with merge patches, and
// never touches spec.
package simulator
