// Package osnetconfig checks documents written for os-net-config, the network configuration tool
// of TripleO and Metal3 hosts: the configuration against os-net-config's own JSON schema
// (schema.yaml, vendored from os-net-config/os-net-config) and the interface mapping against the
// rules os-net-config applies when it reads it. It has no Kubernetes client and is used both by
// the generator at run time and by tests.
package osnetconfig
