// Package render turns a Metal3DataTemplate's metaData and networkData into what a host receives:
// the flat metaData map, OpenStack network_data.json (valid against the schema Ironic enforces),
// cloud-init network config v2 (netplan) and nmstate YAML.
//
// It is pure: the caller gathers the facts (index, object names, the host's NICs, the addresses
// allocated from each pool) and the package never talks to Kubernetes. The same functions serve
// the Metal3Data controller, the pre-provisioning controller (no Machine yet) and the offline
// `metalwire render` command. Errors carry the template field and the fix; errors a controller
// should retry (an address not yet allocated, a host not yet inspected) are told apart by
// IsRetryable.
package render
