// Package devenv runs metalwire's local development environment, behind `metalwire dev`: a real
// kube-apiserver and etcd (started by internal/controlplane from bin/), every CRD installed, a
// controller manager running metalwire's controllers and the BareMetalHost simulator (a stand-in
// for baremetal-operator), Cluster API's core controllers in a child process (cmd/metalwire-capi,
// which links what the CLI must not), a kubeconfig on disk, and the user's manifests applied.
package devenv
