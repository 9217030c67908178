// Package preprovisioning renders DHCP-less pre-provisioning network data. For every
// BareMetalHost annotated with baremetalhost.metal3.io/preprovisioningnetworkdata-reference it
// claims an address in each pool of the named Metal3PreprovisioningDataTemplate (IPClaims keyed
// by host, <host>-<pool>), renders the template with pkg/render, writes the Secret
// <host>-preprov-networkdata, sets the host's spec.preprovisioningNetworkDataName and releases
// the host from the metal3.io/preprovisioning pause that held its inspection.
//
// Two reconcilers share the package: HostReconciler does the work per host; TemplateReconciler
// keeps each template's status (hosts rendered, hosts failed and why) and its finalizer.
package preprovisioning
